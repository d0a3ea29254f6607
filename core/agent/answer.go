package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// answerSchema is the flat JSON Schema an ask step may declare for its
// answer: an object of primitive properties, the subset MCP elicitation
// forms support, so a client can render it as a form.
type answerSchema struct {
	Type        string                     `json:"type"`
	Title       string                     `json:"title,omitempty"`
	Description string                     `json:"description,omitempty"`
	Properties  map[string]*propertySchema `json:"properties"`
	Required    []string                   `json:"required,omitempty"`
}

type propertySchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Enum        []string        `json:"enum,omitempty"`
	Format      string          `json:"format,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	Maximum     *float64        `json:"maximum,omitempty"`
	MinLength   *int            `json:"minLength,omitempty"`
	MaxLength   *int            `json:"maxLength,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
}

const maxAnswerProperties = 20

func (s *answerSchema) validate(v *validation, at string) {
	if s.Type != "object" {
		v.addf(at+".type", `want "object"`)
	}
	switch {
	case len(s.Properties) == 0:
		v.addf(at+".properties", "at least one property")
	case len(s.Properties) > maxAnswerProperties:
		v.addf(at+".properties", "at most %d properties", maxAnswerProperties)
	}
	for _, name := range sortedKeys(s.Properties) {
		p, pat := s.Properties[name], at+".properties."+name
		if !validPropertyName(name) {
			v.addf(pat, "want 1 to 64 letters, digits and underscores")
		}
		if p == nil {
			v.addf(pat, "want an object")
			continue
		}
		switch p.Type {
		case "string", "number", "integer", "boolean":
		default:
			v.addf(pat+".type", `want "string", "number", "integer" or "boolean"`)
			continue
		}
		if len(p.Enum) > 0 && p.Type != "string" {
			v.addf(pat+".enum", "only for strings")
		}
		switch p.Format {
		case "":
		case "date", "date-time", "email", "uri":
			if p.Type != "string" {
				v.addf(pat+".format", "only for strings")
			}
		default:
			v.addf(pat+".format", `want "date", "date-time", "email" or "uri"`)
		}
		if (p.Minimum != nil || p.Maximum != nil) && p.Type != "number" && p.Type != "integer" {
			v.addf(pat, "minimum and maximum are only for numbers")
		}
		if (p.MinLength != nil || p.MaxLength != nil) && p.Type != "string" {
			v.addf(pat, "minLength and maxLength are only for strings")
		}
		if p.Default != nil {
			if err := p.check(p.Default); err != nil {
				v.addf(pat+".default", "%v", err)
			}
		}
	}
	for i, r := range s.Required {
		if s.Properties[r] == nil {
			v.addf(fmt.Sprintf("%s.required[%d]", at, i), "%q is not a property", r)
		}
	}
}

func validPropertyName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// check validates an answer: a JSON object with the required properties,
// no others, each of the declared type and constraints.
func (s *answerSchema) check(answer json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answer, &m); err != nil || m == nil {
		return fmt.Errorf("the answer must be a JSON object")
	}
	for _, r := range s.Required {
		if v, ok := m[r]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Errorf("%s: required", r)
		}
	}
	for _, k := range sortedKeys(m) {
		p := s.Properties[k]
		if p == nil {
			return fmt.Errorf("%s: not a property of the answer (want %s)", k, strings.Join(sortedKeys(s.Properties), ", "))
		}
		if bytes.Equal(bytes.TrimSpace(m[k]), []byte("null")) {
			continue
		}
		if err := p.check(m[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func (p *propertySchema) check(raw json.RawMessage) error {
	switch p.Type {
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("want true or false")
		}
	case "number", "integer":
		var f float64
		if json.Unmarshal(raw, &f) != nil {
			return fmt.Errorf("want a number")
		}
		if p.Type == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("want an integer")
		}
		if p.Minimum != nil && f < *p.Minimum {
			return fmt.Errorf("at least %g", *p.Minimum)
		}
		if p.Maximum != nil && f > *p.Maximum {
			return fmt.Errorf("at most %g", *p.Maximum)
		}
	case "string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("want a string")
		}
		n := utf8.RuneCountInString(s)
		if p.MinLength != nil && n < *p.MinLength {
			return fmt.Errorf("at least %d characters", *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("at most %d characters", *p.MaxLength)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return fmt.Errorf("want one of %s", strings.Join(p.Enum, ", "))
		}
		switch p.Format {
		case "date":
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return fmt.Errorf("want a date YYYY-MM-DD")
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return fmt.Errorf("want an RFC 3339 date-time")
			}
		case "email":
			if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
				return fmt.Errorf("want an e-mail address")
			}
		case "uri":
			if u, err := url.Parse(s); err != nil || !u.IsAbs() {
				return fmt.Errorf("want an absolute URI")
			}
		}
	}
	return nil
}
