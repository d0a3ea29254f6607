package docs

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Kind says what sort of reference a Reference is.
type Kind int

const (
	// Link is a Markdown link or image, [text](target), or a link
	// definition, [label]: target, in a .md file.
	Link Kind = iota
	// Path is a repository path to a Markdown document named in prose,
	// a comment or a string: docs/reference/mcp.md#tools, sdk/ABI.md,
	// RATIONALE.md (relative to the file that names it).
	Path
	// Outside cites a document that was never part of the repository
	// (a specification, style guide or design notes kept elsewhere).
	Outside
	// Section is a numbered section of the bundle ABI, "sdk/ABI.md §9" or
	// "ABI §9": Target is "sdk/ABI.md §9".
	Section
)

func (k Kind) String() string {
	switch k {
	case Link:
		return "link"
	case Path:
		return "path"
	case Outside:
		return "outside"
	case Section:
		return "section"
	}
	return "unknown"
}

// Reference is one reference found in a file.
type Reference struct {
	Line   int    // 1-based
	Kind   Kind   // what it is
	Target string // Link, Path: the target as written (path and #anchor); Outside: the phrase
}

// ABIPath is the bundle ABI, whose numbered sections code and docs cite.
const ABIPath = "sdk/ABI.md"

// outsideDocuments are citations of documents that are not in the
// repository. A reader cannot follow them: say the fact, or point at
// docs/reference/<topic>.md. The phrases are assembled so that this file
// does not match itself.
var outsideDocuments = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:SPEC|DESIGN|STYLE)(?:\.md\b| ?§|'s\b)`),
	regexp.MustCompile(`\bthe (?:SPEC|DESIGN|STYLE)\b`),
	regexp.MustCompile(`\.\./` + `shared\b`),
	regexp.MustCompile(`(?i)\bseeds? (?:\d{3}\b|§|documents?\b|contract\b)`),
	regexp.MustCompile(`(?i)\bthe seed's\b`),
}

var (
	// urlPattern matches absolute URLs, whose paths are not the
	// repository's.
	urlPattern = regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s)>\]"'` + "`" + `]+`)
	// docPathPattern matches a path to a Markdown document, with an
	// optional anchor. Matches are checked for word boundaries by hand:
	// Go's regexp has no look-behind.
	docPathPattern = regexp.MustCompile(`[\w./-]*[\w-]\.md(?:#[\w-]+)?`)
	// mdLinkPattern matches [text](target "title") and ![alt](target);
	// the text may span lines and hold one level of brackets.
	mdLinkPattern = regexp.MustCompile(`\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	// mdDefinitionPattern matches a link reference definition.
	mdDefinitionPattern = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// abiSectionPattern matches citations of numbered sections of
	// sdk/ABI.md, several in a row included ("sdk/ABI.md §4, §5").
	abiSectionPattern = regexp.MustCompile("\\b(?:sdk/)?ABI(?:\\.md)?`? ?(§ ?\\d+(?:(?:, | and )§ ?\\d+)*)")
	sectionNumber     = regexp.MustCompile(`\d+`)
	// codeSpanPattern matches inline code on one line.
	codeSpanPattern = regexp.MustCompile("(`+)[^`\n]+?(`+)")
)

// Extract returns the references in one file, in order of line. name is
// the file's path (its extension decides whether Markdown links count).
func Extract(name, text string) []Reference {
	var refs []Reference
	markdown := strings.HasSuffix(name, ".md")
	prose := text
	if markdown {
		body := blankFences(text)
		refs = append(refs, markdownLinks(body)...)
		// Links were checked as links; their text and target are not
		// paths to check again.
		prose = blankMatches(prose, mdLinkPattern, 0)
		prose = blankMatches(prose, mdDefinitionPattern, 0)
	}
	for i, line := range strings.Split(prose, "\n") {
		// Cheap tests first: regular expressions on every line of every
		// file would take seconds.
		if strings.Contains(line, "ABI") {
			for _, m := range abiSectionPattern.FindAllStringSubmatch(line, -1) {
				for _, n := range sectionNumber.FindAllString(m[1], -1) {
					refs = append(refs, Reference{Line: i + 1, Kind: Section, Target: ABIPath + " §" + n})
				}
			}
		}
		outside := strings.Contains(line, "SPEC") || strings.Contains(line, "DESIGN") || strings.Contains(line, "STYLE") ||
			strings.Contains(line, "shared") || strings.Contains(line, "eed")
		if !outside && !strings.Contains(line, ".md") {
			continue
		}
		for _, p := range outsideDocuments {
			if !outside {
				break
			}
			for _, m := range p.FindAllString(line, -1) {
				refs = append(refs, Reference{Line: i + 1, Kind: Outside, Target: m})
			}
			// Reported once: not again as a missing path.
			line = p.ReplaceAllStringFunc(line, spaces)
		}
		if !strings.Contains(line, ".md") {
			continue
		}
		if strings.Contains(line, "://") {
			line = urlPattern.ReplaceAllStringFunc(line, spaces)
		}
		for _, loc := range docPathPattern.FindAllStringIndex(line, -1) {
			if loc[0] > 0 && isPathByte(line[loc[0]-1]) {
				continue // the tail of a longer token (a URL host, a~b.md)
			}
			if loc[1] < len(line) && isWordByte(line[loc[1]]) {
				continue // foo.mdx, foo.md_old
			}
			if line[loc[0]] == '/' {
				continue // a file system path (/tmp/x.md), not the repository's
			}
			refs = append(refs, Reference{Line: i + 1, Kind: Path, Target: line[loc[0]:loc[1]]})
		}
	}
	slices.SortStableFunc(refs, func(a, b Reference) int { return cmp.Compare(a.Line, b.Line) })
	return refs
}

// markdownLinks finds links and link definitions in Markdown whose fenced
// blocks are already blanked, skipping inline code.
func markdownLinks(body string) []Reference {
	body = codeSpanPattern.ReplaceAllStringFunc(body, func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	})
	var refs []Reference
	for _, p := range []*regexp.Regexp{mdLinkPattern, mdDefinitionPattern} {
		for _, m := range p.FindAllStringSubmatchIndex(body, -1) {
			target := body[m[2]:m[3]]
			refs = append(refs, Reference{Line: 1 + strings.Count(body[:m[2]], "\n"), Kind: Link, Target: target})
		}
	}
	return refs
}

// blankFences replaces the lines inside fenced code blocks (``` or ~~~)
// with empty lines, so that line numbers stay.
func blankFences(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" {
			if f := fenceOpener(trimmed); f != "" {
				fence = f
				lines[i] = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
			fence = ""
		}
		lines[i] = ""
	}
	return strings.Join(lines, "\n")
}

// fenceOpener returns the fence a line opens (three or more backticks or
// tildes), or "".
func fenceOpener(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// blankMatches replaces submatch group of every match of p (0: the whole
// match) with spaces.
func blankMatches(text string, p *regexp.Regexp, group int) string {
	b := []byte(text)
	for _, m := range p.FindAllStringSubmatchIndex(text, -1) {
		for j := m[2*group]; j < m[2*group+1]; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isPathByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '/' || c == '-' || c == '~' || c == '@' || c == ':'
}

// spaces is s blanked, so that offsets after it stay.
func spaces(s string) string { return strings.Repeat(" ", len(s)) }
