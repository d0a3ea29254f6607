package docs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRepositoryReferences fails on every reference, in every text file of
// the repository, to a document or anchor the repository does not hold.
func TestRepositoryReferences(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	repo, err := OpenRepository(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	files := repo.Files()
	if len(files) < 100 {
		t.Fatalf("found %d files under %s; the listing is broken", len(files), root)
	}
	// One worker per CPU: the check must stay well under two seconds even
	// under the race detector.
	var (
		mu       sync.Mutex
		problems []string
		errs     []error
		wg       sync.WaitGroup
		next     = make(chan string)
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for f := range next {
				ps, err := repo.Check(f)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, p := range ps {
					problems = append(problems, p.String())
				}
				mu.Unlock()
			}
		})
	}
	for _, f := range files {
		if !ownSources[f] {
			next <- f
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf("%d references point outside the repository; the reference lives in docs/reference (see docs/reference/README.md)", len(problems))
	}
}

// ownSources are this check's files, whose tables hold the phrases and
// broken links it looks for.
var ownSources = map[string]bool{
	"docs/references.go":      true,
	"docs/references_test.go": true,
	"docs/anchors_test.go":    true,
	"docs/repository_test.go": true,
	"docs/repository.go":      true,
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name, file, text string
		want             []Reference
	}{
		{
			name: "markdown link with anchor",
			file: "docs/a.md",
			text: "See [the ladder](reference/mcp.md#order-of-checks).\n",
			want: []Reference{{1, Link, "reference/mcp.md#order-of-checks"}},
		},
		{
			name: "image, link with title, URL link",
			file: "README.md",
			text: "![shot](docs/x.png)\n[t](config/a.yaml \"title\") and [web](https://example.com/a.md)\n",
			want: []Reference{{1, Link, "docs/x.png"}, {2, Link, "config/a.yaml"}, {2, Link, "https://example.com/a.md"}},
		},
		{
			name: "link text across lines",
			file: "sdk/README.md",
			text: "a class ([ABI §6, Route\nclasses](ABI.md#route-classes)) here\n",
			want: []Reference{{2, Link, "ABI.md#route-classes"}},
		},
		{
			name: "a link's text is not a path",
			file: "docs/a.md",
			text: "[docs/gone.md](reference/mcp.md)\n",
			want: []Reference{{1, Link, "reference/mcp.md"}},
		},
		{
			name: "link definition",
			file: "docs/a.md",
			text: "text\n\n[ref]: ../sdk/ABI.md#10-manifest-json\n",
			want: []Reference{{3, Link, "../sdk/ABI.md#10-manifest-json"}},
		},
		{
			name: "links in fences and code spans are code, paths named in them count",
			file: "docs/a.md",
			text: "```\n[x](nowhere.md)\nsee docs/b.md\n```\n`[y](gone.md)` and `sdk/ABI.md`\n",
			want: []Reference{{3, Path, "docs/b.md"}, {5, Path, "sdk/ABI.md"}},
		},
		{
			name: "paths in a Go comment",
			file: "core/mcp/doc.go",
			text: "// the ladder (docs/reference/mcp.md#order-of-checks); RATIONALE.md says why.\n",
			want: []Reference{{1, Path, "docs/reference/mcp.md#order-of-checks"}, {1, Path, "RATIONALE.md"}},
		},
		{
			name: "not document paths",
			file: "x.go",
			text: "// foo.mdx, a.md_old, *.md, /tmp/before.md, https://github.com/o/r/blob/main/README.md\n",
			want: nil,
		},
		{
			name: "outside documents",
			file: "x.go",
			// The names are built from parts so that this file does not cite
			// them itself.
			text: "// " + "SP" + "EC" + " §2a rung 5\n# see DE" + "SIGN" + ".md and ST" + "YLE" + " §7\n// ../" + "shared/notes\n// seed" + " 004 §5, the seed" + "'s contract\n",
			want: []Reference{
				{1, Outside, "SPEC" + " §"}, {2, Outside, "DESIGN" + ".md"}, {2, Outside, "STYLE" + " §"},
				{3, Outside, "../" + "shared"}, {4, Outside, "seed" + " 004"}, {4, Outside, "the seed" + "'s"},
			},
		},
		{
			name: "numbered sections of the ABI",
			file: "sdk/c/kadu.h",
			text: "/* sdk/ABI.md §4, §5 and §9 */\n// ABI §10; `sdk/ABI.md` §6\n// RFC 9110 §12.5.1, the SABI §3\n",
			want: []Reference{
				{1, Section, "sdk/ABI.md §4"}, {1, Section, "sdk/ABI.md §5"}, {1, Section, "sdk/ABI.md §9"}, {1, Path, "sdk/ABI.md"},
				{2, Section, "sdk/ABI.md §10"}, {2, Section, "sdk/ABI.md §6"}, {2, Path, "sdk/ABI.md"},
			},
		},
		{
			name: "words that only look like outside documents",
			file: "x.go",
			text: "// fails BY DESIGN; CHEQUE ESPECIAL; go test runs the seeds; maphash.MakeSeed()\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(tt.file, tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Extract(%q) =\n%v\nwant\n%v", tt.text, got, tt.want)
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	f.Add("a.md", "[x](y.md#z)\n```\n[q](r)\n```\n")
	f.Add("a.go", "// docs/reference/mcp.md#tools "+"SP"+"EC"+" §1")
	f.Add("a.md", "[a\n[b](c)\n](d)")
	f.Fuzz(func(t *testing.T, name, text string) {
		lines := strings.Count(text, "\n") + 1
		for _, r := range Extract(name, text) {
			if r.Line < 1 || r.Line > lines {
				t.Fatalf("reference %v on line %d of a %d-line text", r, r.Line, lines)
			}
			if r.Target == "" {
				t.Fatalf("empty target: %v", r)
			}
		}
	})
}
