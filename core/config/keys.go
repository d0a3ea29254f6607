package config

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// field is one leaf key of a struct: where it lives and what type it has.
type field struct {
	index []int // for reflect.Value.FieldByIndex
	typ   reflect.Type
}

// mapSection is a map[string]Struct field such as Config.Plans: the user
// names its entries, so its keys are "<section>.<name>.<field>".
type mapSection struct {
	index []int        // of the map field in Config
	typ   reflect.Type // the map type
	elem  schema       // the keys of one entry, relative to it
}

// schema is the set of keys Config understands, derived from its koanf tags.
// Built once at package initialisation and never modified.
type schema struct {
	fields   map[string]field       // leaf keys, e.g. "auth.dev.default_role"
	sections map[string]bool        // keys of nested structs and maps, e.g. "auth", "auth.dev", "plans"
	maps     map[string]*mapSection // map sections, e.g. "plans"
	// keys are the leaf keys, sorted; the keys of map entries are spelled
	// with namePlaceholder, e.g. "plans.<name>.retention".
	keys []string
}

// namePlaceholder stands for the entry name in the keys of a map section.
const namePlaceholder = "<name>"

// entryNameRE is the rule for the names of map entries (plan names): they
// are one key segment, and lower case so that the environment can set them.
var entryNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

const entryNameRule = `a lower-case letter, then up to 31 of a-z, 0-9, "_", "-"`

var configSchema = buildSchema(reflect.TypeFor[Config]())

// buildSchema walks t's fields. It panics on a field without a koanf tag, of
// a type decode does not handle, or a map of structs inside a map of structs:
// programming errors the tests catch.
func buildSchema(t reflect.Type) schema {
	s := schema{fields: map[string]field{}, sections: map[string]bool{}, maps: map[string]*mapSection{}}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("koanf")
			if f.Anonymous && f.Type.Kind() == reflect.Struct && tag == "" {
				// An embedded struct's keys are the embedding struct's own
				// (Bundle embeds the limits of core/plugin/bundleconf).
				walk(f.Type, prefix, append(slices.Clone(index), i))
				continue
			}
			if tag == "" || tag == "-" || strings.ContainsAny(tag, ". ") {
				panic(fmt.Sprintf("config: field %s.%s needs a koanf tag (lower_snake_case, no dots)", t.Name(), f.Name))
			}
			key := prefix + tag
			idx := append(slices.Clone(index), i)
			switch {
			case f.Type.Kind() == reflect.Struct:
				s.sections[key] = true
				walk(f.Type, key+".", idx)
			case isStructMap(f.Type):
				elem := buildSchema(f.Type.Elem())
				if len(elem.maps) > 0 {
					panic(fmt.Sprintf("config: key %s: maps of structs cannot nest", key))
				}
				s.sections[key] = true
				s.maps[key] = &mapSection{index: idx, typ: f.Type, elem: elem}
				for _, k := range elem.keys {
					s.keys = append(s.keys, key+"."+namePlaceholder+"."+k)
				}
			case supported(f.Type):
				s.fields[key] = field{index: idx, typ: f.Type}
				s.keys = append(s.keys, key)
			default:
				panic(fmt.Sprintf("config: key %s: type %s is not supported by the decoder", key, f.Type))
			}
		}
	}
	walk(t, "", nil)
	slices.Sort(s.keys)
	return s
}

func isStructMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Struct
}

// entry splits a key under a map section, "plans.team.retention", into the
// section ("plans"), the entry name ("team") and the key within the entry
// ("retention"; "" for the entry itself).
func (s *schema) entry(key string) (section string, m *mapSection, name, rest string, ok bool) {
	for section, m := range s.maps {
		if after, found := strings.CutPrefix(key, section+"."); found && after != "" {
			name, rest, _ = strings.Cut(after, ".")
			return section, m, name, rest, true
		}
	}
	return "", nil, "", "", false
}

// isSection reports whether key names a struct, a map section or one entry
// of a map section, rather than a leaf.
func (s *schema) isSection(key string) bool {
	if s.sections[key] {
		return true
	}
	_, m, _, rest, ok := s.entry(key)
	return ok && (rest == "" || m.elem.sections[rest])
}

// concrete spells a schema key for the unknown key it is compared with: the
// entry name is taken from the same position of unknown, so that
// "plans.team.retension" is compared with "plans.team.retention".
func concrete(key, unknown string) string {
	if !strings.Contains(key, namePlaceholder) {
		return key
	}
	segs, theirs := strings.Split(key, "."), strings.Split(unknown, ".")
	if i := slices.Index(segs, namePlaceholder); i < len(theirs) {
		segs[i] = theirs[i]
	}
	return strings.Join(segs, ".")
}

// suggest returns the known key closest to an unknown one, or "".
func (s *schema) suggest(unknown string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range s.keys {
		k = concrete(k, unknown)
		// "addr" is also compared spelled out, to catch "adress".
		d := min(editDistance(unknown, k), editDistance(unknown, strings.ReplaceAll(k, "addr", "address")))
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist <= 2 || 3*bestDist <= len(unknown) {
		return best
	}
	return ""
}

// underscored returns the key an environment variable meant when it
// separated nesting levels with a single "_" (KADU_AUTH_ISSUER,
// KADU_PLANS__TEAM_RETENTION), or "".
func (s *schema) underscored(unknown string) string {
	flat := strings.ReplaceAll(unknown, ".", "_")
	for _, k := range s.keys {
		before, after, isEntry := strings.Cut(k, namePlaceholder)
		if !isEntry {
			if strings.ReplaceAll(k, ".", "_") == flat {
				return k
			}
			continue
		}
		name, ok := strings.CutPrefix(flat, strings.ReplaceAll(before, ".", "_"))
		if ok {
			name, ok = strings.CutSuffix(name, strings.ReplaceAll(after, ".", "_"))
		}
		if ok && entryNameRE.MatchString(name) {
			return before + name + after
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
