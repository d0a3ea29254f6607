package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// apply decodes one source's flattened keys onto cfg, in key order. Values
// wrapped in sourced carry their own source name; others come from source.
func (p *problems) apply(cfg *Config, flat map[string]any, source string) {
	root := reflect.ValueOf(cfg).Elem()
	for _, key := range slices.Sorted(maps.Keys(flat)) {
		v, src := flat[key], source
		if s, ok := v.(sourced); ok {
			v, src = s.Value, s.Source
		}
		if v == nil {
			continue // null keeps the earlier value
		}
		if f, ok := configSchema.fields[key]; ok {
			p.set(root.FieldByIndex(f.index), key, f.typ, v, src)
			continue
		}
		if section, m, name, rest, ok := configSchema.entry(key); ok {
			p.applyEntry(root.FieldByIndex(m.index), section, m, name, rest, v, src)
			continue
		}
		p.unknown(key, v, src)
	}
}

// set decodes v into dst, reporting a problem at key if it does not fit.
func (p *problems) set(dst reflect.Value, key string, typ reflect.Type, v any, src string) bool {
	val, at, msg := decode(key, typ, v)
	if msg != "" {
		*p = append(*p, &KeyError{Key: at, Source: src, Msg: msg})
		return false
	}
	dst.Set(val)
	return true
}

// applyEntry sets the key rest of the entry name of a map section such as
// plans (mv is the map). The entry is created the first time a source
// mentions it, from the value it has so far — a built-in plan, as Defaults()
// has them all — or else from zero values (but for the fields its
// ApplyDefaults sets, if it has one), which Validate reports unless every
// field gets set. An empty mapping ("plans: {gold: {}}") declares the
// entry without setting a field.
func (p *problems) applyEntry(mv reflect.Value, section string, m *mapSection, name, rest string, v any, src string) {
	entryKey := section + "." + name
	if !entryNameRE.MatchString(name) {
		// One report per entry, not per field: keys arrive sorted.
		if n := len(*p); n == 0 || !sameEntry((*p)[n-1], entryKey) {
			*p = append(*p, &KeyError{Key: entryKey, Source: src,
				Msg: fmt.Sprintf("%q is not a valid name for an entry of %s (want %s)", name, section, entryNameRule)})
		}
		return
	}
	nameV := reflect.ValueOf(name).Convert(m.typ.Key())
	entry := reflect.New(m.typ.Elem()).Elem()
	if old := mv.MapIndex(nameV); old.IsValid() {
		entry.Set(old)
	} else if d, ok := entry.Addr().Interface().(entryDefaulter); ok {
		d.ApplyDefaults() // a field with a default (plans.<name>.audit_retention)
	}
	f, isField := m.elem.fields[rest]
	switch {
	case isField:
		if !p.set(entry.FieldByIndex(f.index), entryKey+"."+rest, f.typ, v, src) {
			return
		}
	case (rest == "" || m.elem.sections[rest]) && isEmptyMapping(v):
		// Declared, nothing set.
	case rest == "":
		p.unknown(entryKey, v, src)
		return
	default:
		p.unknown(entryKey+"."+rest, v, src)
		return
	}
	if mv.IsNil() {
		mv.Set(reflect.MakeMap(m.typ))
	}
	mv.SetMapIndex(nameV, entry)
}

// entryDefaulter is an entry type some of whose fields have a default, so
// that a new entry starts from them rather than from zero values.
type entryDefaulter interface{ ApplyDefaults() }

func sameEntry(err error, key string) bool {
	ke, ok := err.(*KeyError)
	return ok && ke.Key == key
}

func isEmptyMapping(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// unknown reports a key that is not a leaf of the schema: a section given a
// value, a misspelt key (with the closest known one), or an environment
// variable that separated nesting levels with a single "_".
func (p *problems) unknown(key string, v any, src string) {
	env := strings.HasPrefix(src, "env ")
	if k := configSchema.underscored(key); env && k != "" {
		*p = append(*p, &KeyError{Key: key, Source: src, Msg: fmt.Sprintf(
			"unknown key (did you mean %s for %s? nesting levels are separated by \"__\")", EnvVar(k), k)})
		return
	}
	if configSchema.isSection(key) {
		if !isEmptyMapping(v) {
			*p = append(*p, &KeyError{Key: key, Source: src, Msg: "is a section; want a mapping of its keys"})
		}
		return // "auth: {}"
	}
	msg := "unknown key"
	if s := configSchema.suggest(key); s != "" && env {
		msg += fmt.Sprintf(" (did you mean %s for %s?)", EnvVar(s), s)
	} else if s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	*p = append(*p, &KeyError{Key: key, Source: src, Msg: msg})
}
