package manifest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Template is a parsed level-1 URI template. Immutable and safe for
// concurrent use.
type Template struct {
	re   *regexp.Regexp // anchored; one group per {var}
	vars []string
}

// isTemplateVar reports whether s matches ^[A-Za-z0-9_]+$, by hand: a
// guest checks its templates inside _initialize, where a package-level
// regexp would be compiled on every instance start.
func isTemplateVar(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// ParseTemplate compiles an RFC 6570 level-1 URI template ("{var}" simple
// expansion only). A variable matches one non-empty run of characters
// without "/", "?" or "#", so a variable never spans path segments.
func ParseTemplate(t string) (*Template, error) {
	if t == "" {
		return nil, errors.New("required, e.g. kobana://kadu/tasks/{id}")
	}
	if !utf8.ValidString(t) {
		return nil, errors.New("not valid UTF-8")
	}
	if !strings.Contains(t, "://") {
		return nil, fmt.Errorf("%q: want an absolute URI template such as kobana://kadu/tasks/{id}", t)
	}
	var re strings.Builder
	re.WriteByte('^')
	td := &Template{}
	rest, afterVar := t, false
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if closeAt := strings.IndexByte(rest, '}'); closeAt >= 0 && (open < 0 || closeAt < open) {
			return nil, fmt.Errorf("%q: unbalanced }", t)
		}
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		re.WriteString(regexp.QuoteMeta(rest[:open]))
		if open == 0 && afterVar {
			return nil, fmt.Errorf("%q: two expressions need a literal between them", t)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q: unbalanced {", t)
		}
		name := rest[open+1 : open+end]
		if !isTemplateVar(name) {
			return nil, fmt.Errorf("%q: expression {%s}: only level-1 {name} expressions are supported", t, name)
		}
		td.vars = append(td.vars, name)
		re.WriteString(`([^/?#]+)`)
		rest, afterVar = rest[open+end+1:], true
	}
	re.WriteByte('$')
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("%q: %w", t, err)
	}
	td.re = compiled
	return td, nil
}

// Match reports whether uri is an expansion of the template.
func (t *Template) Match(uri string) bool { return t.re.MatchString(uri) }

// Values returns the values of the template's variables in uri, in the
// order of Vars and as written (not percent-decoded), or false when uri is
// no expansion of the template.
func (t *Template) Values(uri string) ([]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	return m[1:], true
}

// Vars returns the template's variable names in order.
func (t *Template) Vars() []string { return append([]string(nil), t.vars...) }
