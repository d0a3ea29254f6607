package docs

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

var (
	atxHeading  = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchor  = regexp.MustCompile(`<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']`)
	inlineLink  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag     = regexp.MustCompile(`<[^>]+>`)
	setextUnder = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
)

// Anchors returns the fragment identifiers a Markdown document offers when
// GitHub renders it: one per heading, slugged as GitHub does (duplicates
// get -1, -2, …), and every explicit <a id=…> or <a name=…>.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	add := func(heading string) {
		slug := Slug(heading)
		n := seen[slug]
		seen[slug] = n + 1
		if n > 0 {
			slug += "-" + strconv.Itoa(n)
		}
		anchors[slug] = true
	}
	lines := strings.Split(blankFences(text), "\n")
	for i, line := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			add(m[1])
			continue
		}
		// A setext heading: a paragraph line underlined with = or -. A
		// line of dashes under a blank line is a thematic break instead.
		if i > 0 && setextUnder.MatchString(line) && strings.TrimSpace(lines[i-1]) != "" &&
			!strings.HasPrefix(strings.TrimSpace(lines[i-1]), "|") && strings.TrimSpace(line) != "---" {
			add(lines[i-1])
		}
	}
	return anchors
}

// Slug is GitHub's anchor for a heading: the rendered text lower-cased,
// with every character that is not a letter, digit, mark, hyphen,
// underscore or space removed and each space turned into a hyphen.
func Slug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.TrimSpace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var numberedHeading = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(\d+)\.[ \t]`)

// Sections returns the numbers of a Markdown document's numbered headings
// ("## 9. Input required, and state" is section "9").
func Sections(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(blankFences(text), "\n") {
		if m := numberedHeading.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	return out
}
