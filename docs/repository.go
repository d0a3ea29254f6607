package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Problem is one reference that does not resolve.
type Problem struct {
	File    string // slash path from the repository root
	Line    int
	Message string // what is wrong and what to do
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message) }

// Repository is the set of files a reference may point at: what git
// tracks, plus new files not ignored, so that a check run before a commit
// sees the files about to be added.
//
// A Repository is safe for concurrent use once OpenRepository returns.
type Repository struct {
	Root  string
	files map[string]bool // slash paths; fixed at creation
	dirs  map[string]bool // fixed at creation

	mu   sync.Mutex
	docs map[string]*document // by Markdown file, filled on first use
}

// document is what references into one Markdown file may name.
type document struct {
	anchors  map[string]bool // GitHub heading slugs and explicit anchors
	sections map[string]bool // numbers of numbered headings
}

// skipped are files whose text is not prose: fuzz corpora and the
// generated or vendored lock files.
var skipped = regexp.MustCompile(`(^|/)testdata/fuzz/|(^|/)(go\.sum|Cargo\.lock|package-lock\.json)$`)

// OpenRepository lists the files under root with git, or by walking the
// tree when git is not there (an exported tarball).
func OpenRepository(ctx context.Context, root string) (*Repository, error) {
	names, err := gitFiles(ctx, root)
	if err != nil {
		names, err = walkFiles(root)
		if err != nil {
			return nil, fmt.Errorf("list the files under %s: %w", root, err)
		}
	}
	r := &Repository{Root: root, files: map[string]bool{}, dirs: map[string]bool{".": true}, docs: map[string]*document{}}
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(n))); err != nil {
			continue // deleted in the work tree, not yet in the index
		}
		r.files[n] = true
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			r.dirs[d] = true
		}
	}
	return r, nil
}

func gitFiles(ctx context.Context, root string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var names []string
	for _, n := range bytes.Split(out, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	if len(names) == 0 {
		return nil, errors.New("git ls-files: no files")
	}
	return names, nil
}

func walkFiles(root string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (base == "bin" && path.Dir(rel) == "." || base == "node_modules" || base == "target" ||
				strings.HasPrefix(base, ".") && base != ".ci" && base != ".github") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			names = append(names, rel)
		}
		return nil
	})
	return names, err
}

// Files returns the text files to scan, in no particular order.
func (r *Repository) Files() []string {
	var names []string
	for n := range r.files {
		if !skipped.MatchString(n) {
			names = append(names, n)
		}
	}
	return names
}

// Check reads one file and returns the references in it that do not
// resolve. A binary file has none.
func (r *Repository) Check(name string) ([]Problem, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil, nil
	}
	var problems []Problem
	for _, ref := range Extract(name, string(data)) {
		if msg := r.resolve(name, ref); msg != "" {
			problems = append(problems, Problem{File: name, Line: ref.Line, Message: msg})
		}
	}
	return problems, nil
}

// resolve returns "" when ref points at something in the repository, or
// what is wrong and what to do.
func (r *Repository) resolve(name string, ref Reference) string {
	switch ref.Kind {
	case Outside:
		return fmt.Sprintf("%q cites a document that is not in the repository; state the fact itself, or point at docs/reference/<topic>.md (or a public RFC/spec URL)", ref.Target)
	case Link:
		return r.resolveLink(name, ref.Target)
	case Path:
		return r.resolvePath(name, ref.Target)
	case Section:
		return r.resolveSection(ref.Target)
	}
	return ""
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func (r *Repository) resolveLink(name, target string) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // a URL: not the repository's to check
	}
	target, _, _ = strings.Cut(target, "?")
	p, anchor, _ := strings.Cut(target, "#")
	if unescaped, err := url.PathUnescape(p); err == nil {
		p = unescaped
	}
	var full string
	switch {
	case p == "":
		full = name
	case strings.HasPrefix(p, "/"):
		full = path.Clean(strings.TrimPrefix(p, "/"))
	default:
		full = path.Join(path.Dir(name), p)
	}
	if full == ".." || strings.HasPrefix(full, "../") {
		return fmt.Sprintf("link %q leaves the repository; link to a file inside it or to a public URL", target)
	}
	if !r.files[full] && !r.dirs[full] {
		return fmt.Sprintf("link %q: %s does not exist in the repository; fix the path or drop the link", target, full)
	}
	return r.checkAnchor(full, anchor, target)
}

func (r *Repository) resolvePath(name, target string) string {
	p, anchor, _ := strings.Cut(target, "#")
	var candidates []string
	switch {
	case strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../"):
		candidates = []string{path.Join(path.Dir(name), p)}
	case strings.HasPrefix(p, "/"):
		candidates = []string{path.Clean(strings.TrimPrefix(p, "/"))}
	default:
		// docs/reference/mcp.md is from the root; RATIONALE.md and
		// internal/x/README.md are from the naming file's directory.
		candidates = []string{path.Clean(p), path.Join(path.Dir(name), p)}
	}
	for _, c := range candidates {
		if r.files[c] {
			return r.checkAnchor(c, anchor, target)
		}
	}
	return fmt.Sprintf("%s names a document that does not exist in the repository (looked for %s); fix the path, or say the fact itself", target, strings.Join(candidates, ", "))
}

func (r *Repository) checkAnchor(file, anchor, target string) string {
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	doc, err := r.document(file)
	if err != nil {
		return fmt.Sprintf("%q: %v", target, err)
	}
	if doc.anchors[strings.ToLower(anchor)] || doc.anchors[anchor] {
		return ""
	}
	return fmt.Sprintf("%q: %s has no heading with anchor #%s; link to an existing heading (GitHub slug: lower case, punctuation dropped, spaces to hyphens)", target, file, anchor)
}

// document returns the anchors and sections of the Markdown file, reading
// it once.
func (r *Repository) document(file string) (*document, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.docs[file]; ok {
		return d, nil
	}
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(file)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	text := string(data)
	d := &document{anchors: Anchors(text), sections: Sections(text)}
	r.docs[file] = d
	return d, nil
}

// resolveSection checks that "sdk/ABI.md §N" names a numbered heading
// ("## N. …") of the ABI.
func (r *Repository) resolveSection(target string) string {
	file, n, _ := strings.Cut(target, " §")
	if !r.files[file] {
		return fmt.Sprintf("%s cites %s, which does not exist in the repository", target, file)
	}
	doc, err := r.document(file)
	if err != nil {
		return fmt.Sprintf("%s: %v", target, err)
	}
	if !doc.sections[n] {
		return fmt.Sprintf("%s: %s has no section %s; cite an existing numbered heading", target, file, n)
	}
	return ""
}
