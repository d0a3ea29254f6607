package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// HeaderParam is a tool parameter that the request mirrors in an
// Mcp-Param-{Header} HTTP header.
type HeaderParam struct {
	Header string   // the x-mcp-header value, e.g. "Region"
	Path   []string // property keys from the schema root to the parameter
	Type   string   // "string", "integer" or "boolean"
}

// headerKeyword marks a tool parameter mirrored as Mcp-Param-{value}.
const headerKeyword = "x-mcp-header"

// Keywords whose values are subschemas, by shape. A subschema reached
// through any of them except "properties" is off the properties-only path
// an x-mcp-header parameter must sit on.
var (
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaListKeywords  = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaValueKeywords = []string{"not", "if", "then", "else", "contains", "additionalProperties", "unevaluatedProperties",
		"unevaluatedItems", "propertyNames", "additionalItems", "contentSchema", "items"}
)

// HeaderParams derives the x-mcp-header parameters of an inputSchema and
// enforces their rules (docs/reference/mcp.md): the value is a non-empty HTTP token,
// unique case-insensitively in the schema; the parameter's type is exactly
// "string", "integer" or "boolean"; and it is reachable from the root
// through a chain of "properties" keys only — not through array keywords,
// allOf/anyOf/oneOf/not, conditionals or $ref. The result is ordered by
// parameter path.
func HeaderParams(schema json.RawMessage) ([]HeaderParam, error) {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	w := headerWalker{seen: map[string]string{}}
	w.walk(doc, nil, true, "")
	slices.SortFunc(w.params, func(a, b HeaderParam) int {
		return slices.Compare(a.Path, b.Path)
	})
	return w.params, errors.Join(w.errs...)
}

type headerWalker struct {
	params []HeaderParam
	seen   map[string]string // lower-cased header → pointer that declared it
	errs   []error
}

func (w *headerWalker) walk(node any, path []string, onPath bool, ptr string) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	if h, ok := obj[headerKeyword]; ok {
		w.check(obj, h, path, onPath, ptr)
	}
	for _, kw := range schemaMapKeywords {
		m, ok := obj[kw].(map[string]any)
		if !ok {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sub := ptr + "/" + escapePointer(kw) + "/" + escapePointer(k)
			if kw == "properties" {
				w.walk(m[k], append(slices.Clip(path), k), onPath, sub)
			} else {
				w.walk(m[k], path, false, sub)
			}
		}
	}
	for _, kw := range schemaListKeywords {
		if list, ok := obj[kw].([]any); ok {
			for i, sub := range list {
				w.walk(sub, path, false, fmt.Sprintf("%s/%s/%d", ptr, escapePointer(kw), i))
			}
		}
	}
	for _, kw := range schemaValueKeywords {
		if sub, ok := obj[kw].(map[string]any); ok {
			w.walk(sub, path, false, ptr+"/"+escapePointer(kw))
		}
	}
}

func (w *headerWalker) check(obj map[string]any, h any, path []string, onPath bool, ptr string) {
	at := ptr
	if at == "" {
		at = "(root)"
	}
	fail := func(format string, args ...any) {
		w.errs = append(w.errs, fmt.Errorf("%s at %s: %s", headerKeyword, at, fmt.Sprintf(format, args...)))
	}
	name, _ := h.(string)
	switch {
	case !onPath || len(path) == 0:
		fail("a mirrored parameter must be reached from the root through properties keys only " +
			"(not through items, allOf/anyOf/oneOf/not, if/then/else, $defs or $ref)")
		return
	case name == "":
		fail("want a non-empty string naming the header, e.g. \"Region\"")
		return
	case !IsToken(name):
		fail("%q is not an HTTP header token (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
		return
	}
	typ, _ := obj["type"].(string)
	if typ != "string" && typ != "integer" && typ != "boolean" {
		fail(`the parameter's "type" must be "string", "integer" or "boolean" (number, object, array and type lists are not allowed)`)
		return
	}
	key := strings.ToLower(name)
	if prev, dup := w.seen[key]; dup {
		fail("%q is already used at %s (header names are case-insensitive)", name, prev)
		return
	}
	w.seen[key] = at
	w.params = append(w.params, HeaderParam{Header: name, Path: slices.Clone(path), Type: typ})
}

// IsToken reports whether s is an RFC 9110 token: no control characters,
// spaces or separators.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// escapePointer escapes one RFC 6901 reference token.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
