package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlFile is what the configuration file says beyond the values koanf
// reads: the line of every key, and the text of every scalar as written.
type yamlFile struct {
	path  string
	lines map[string]int    // "auth.algorithms", "auth.algorithms[1]" → line
	raw   map[string]string // scalars YAML typed as something else than a string, as written
}

// parseYAMLFile reads the positions and raw scalars of data, the file at
// path that koanf has already parsed (so data is valid YAML).
func parseYAMLFile(path string, data []byte) yamlFile {
	f := yamlFile{path: path, lines: map[string]int{}, raw: map[string]string{}}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return f
	}
	f.walk("", doc.Content[0])
	return f
}

func (f *yamlFile) walk(key string, n *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if key != "" {
				k = key + "." + k
			}
			f.lines[k] = n.Content[i].Line
			f.walk(k, n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			k := fmt.Sprintf("%s[%d]", key, i)
			f.lines[k] = item.Line
			f.walk(k, item)
		}
	case yaml.ScalarNode:
		if n.Tag != "!!str" && n.Tag != "!!null" {
			f.raw[key] = n.Value
		}
	}
}

// source names where key was set in the file: "path:line".
func (f *yamlFile) source(key string) string {
	if line, ok := f.lines[key]; ok {
		return f.path + ":" + strconv.Itoa(line)
	}
	return f.path
}

// sourced wraps every value of flat with its file position. A scalar YAML
// read as a number or a boolean for a string key is taken as written: a
// sha256 of digits only, or "0x1F", is the text the operator typed, not
// the number YAML made of it (which drops leading zeros, or overflows).
func (f *yamlFile) sourced(flat map[string]any) map[string]any {
	out := make(map[string]any, len(flat))
	for key, v := range flat {
		if raw, ok := f.raw[key]; ok && isStringKey(key) {
			v = raw
		}
		out[key] = sourced{Source: f.source(key), Value: v}
	}
	return out
}

// isStringKey reports whether key is a leaf of a string type.
func isStringKey(key string) bool {
	if fl, ok := configSchema.fields[key]; ok {
		return fl.typ.Kind() == reflect.String
	}
	if _, m, _, rest, ok := configSchema.entry(key); ok {
		fl, ok := m.elem.fields[rest]
		return ok && fl.typ.Kind() == reflect.String
	}
	return false
}

// origins records where the value of each key came from, the last source
// that set it winning: "config/kadu.yaml:12", "env KADU_ADDR", "flag --addr".
type origins map[string]string

func (o origins) record(flat map[string]any) {
	for key, v := range flat {
		if s, ok := v.(sourced); ok {
			o[key] = s.Source
		}
	}
}

// recordFile records every key the file names, sections and map entries
// included, so that a problem with an entry set in part ("plans.gold"
// without its retention) points at the entry's line.
func (o origins) recordFile(f *yamlFile, flat map[string]any) {
	for key := range f.lines {
		if !strings.Contains(key, "[") {
			o[key] = f.source(key)
		}
	}
	o.record(flat)
}

// of returns the source of the value a Validate problem at key is about:
// the key's own ("auth.algorithms[1]" is the list's), or, for a key of a
// map entry that no source set (a plan set in part), the source that
// declared the entry. "" for a default.
func (o origins) of(key string) string {
	base, _, _ := strings.Cut(key, "[")
	for k := base; k != ""; {
		if s, ok := o[k]; ok {
			return s
		}
		if s := o.under(k); s != "" {
			return s
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
		if _, _, _, rest, ok := configSchema.entry(k); !ok || rest != "" {
			break // only a map entry stands for its keys
		}
	}
	return ""
}

// under returns the source of the first key under prefix, in key order.
func (o origins) under(prefix string) string {
	var keys []string
	for k := range o {
		if strings.HasPrefix(k, prefix+".") || strings.HasPrefix(k, prefix+"[") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return o[slices.Min(keys)]
}

// merge adds to decoding problems the problems Validate found, each with
// the source of its value, leaving out those about a key that could not be
// decoded (its value is the earlier one, so the message would mislead).
func (o origins) merge(decoded problems, validate error) problems {
	bad := map[string]bool{}
	for _, err := range decoded {
		var ke *KeyError
		if errors.As(err, &ke) {
			base, _, _ := strings.Cut(ke.Key, "[")
			bad[base] = true
		}
	}
	out := slices.Clone(decoded)
	for _, err := range unjoin(validate) {
		var ke *KeyError
		if !errors.As(err, &ke) {
			out = append(out, err)
			continue
		}
		base, _, _ := strings.Cut(ke.Key, "[")
		if bad[base] {
			continue
		}
		ke.Source = o.of(ke.Key)
		out = append(out, ke)
	}
	return out
}

// unjoin lists the errors errors.Join put together (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
