package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// field is one leaf key of Config: where it lives and what type it has.
type field struct {
	index []int // for reflect.Value.FieldByIndex
	typ   reflect.Type
}

// schema is the set of keys Config understands, derived from its koanf tags.
// Built once at package initialisation and never modified.
type schema struct {
	fields   map[string]field // leaf keys, e.g. "auth.dev.default_role"
	sections map[string]bool  // keys of nested structs, e.g. "auth", "auth.dev"
	keys     []string         // leaf keys, sorted
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringsType  = reflect.TypeFor[[]string]()

	configSchema = buildSchema(reflect.TypeFor[Config]())
)

// buildSchema walks t's fields. It panics on a field without a koanf tag or
// of a type decode does not handle: a programming error the tests catch.
func buildSchema(t reflect.Type) schema {
	s := schema{fields: map[string]field{}, sections: map[string]bool{}}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("koanf")
			if tag == "" || tag == "-" || strings.ContainsAny(tag, ". ") {
				panic(fmt.Sprintf("config: field %s.%s needs a koanf tag (lower_snake_case, no dots)", t.Name(), f.Name))
			}
			key := prefix + tag
			idx := append(slices.Clone(index), i)
			switch {
			case f.Type.Kind() == reflect.Struct:
				s.sections[key] = true
				walk(f.Type, key+".", idx)
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

func supported(t reflect.Type) bool {
	switch {
	case t == durationType, t == stringsType:
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// decode converts a value from a source (YAML scalar or list, environment or
// flag string, typed flag value) to t. On failure it returns the key the
// problem is at (key or key[i]) and a message saying what is allowed.
func decode(key string, t reflect.Type, v any) (reflect.Value, string, string) {
	switch {
	case t == durationType:
		d, msg := toDuration(v)
		return reflect.ValueOf(d), key, msg
	case t == stringsType:
		return toStrings(key, v)
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		s, ok := scalarString(v)
		if !ok {
			return out, key, fmt.Sprintf("want a string, got %s", describe(v))
		}
		out.SetString(s)
	case reflect.Bool:
		b, msg := toBool(v)
		if msg != "" {
			return out, key, msg
		}
		out.SetBool(b)
	default: // signed integers
		n, msg := toInt(v, t.Bits())
		if msg != "" {
			return out, key, msg
		}
		out.SetInt(n)
	}
	return out, key, ""
}

func toDuration(v any) (time.Duration, string) {
	switch x := v.(type) {
	case time.Duration:
		return x, ""
	case string:
		if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
			return d, ""
		}
	}
	return 0, fmt.Sprintf("%s is not a duration (want Go syntax such as \"30s\", \"5m\" or \"1h30m\"; a bare number has no unit)", describe(v))
}

func toBool(v any) (bool, string) {
	switch x := v.(type) {
	case bool:
		return x, ""
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b, ""
		}
	}
	return false, fmt.Sprintf("%s is not a boolean (want true or false)", describe(v))
}

func toInt(v any, bits int) (int64, string) {
	var n int64
	ok := true
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		ok = x <= math.MaxInt64
		n = int64(x)
	case float64:
		ok = x == math.Trunc(x) && math.Abs(x) < 1<<62
		n = int64(x)
	case string:
		var err error
		n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		ok = err == nil
	default:
		ok = false
	}
	if ok && (bits == 64 || n == n<<(64-bits)>>(64-bits)) {
		return n, ""
	}
	return 0, fmt.Sprintf("%s is not a whole number in range", describe(v))
}

// toStrings accepts a list of scalars, a []string (flags) or a
// comma-separated string (environment, flags); empty items are dropped.
func toStrings(key string, v any) (reflect.Value, string, string) {
	var out []string
	switch x := v.(type) {
	case []string:
		out = slices.Clone(x)
	case string:
		for item := range strings.SplitSeq(x, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	case []any:
		for i, item := range x {
			s, ok := scalarString(item)
			if !ok {
				return reflect.Value{}, fmt.Sprintf("%s[%d]", key, i), fmt.Sprintf("want a string, got %s", describe(item))
			}
			out = append(out, s)
		}
	default:
		return reflect.Value{}, key, fmt.Sprintf("want a list of strings (or a comma-separated string), got %s", describe(v))
	}
	if out == nil {
		out = []string{}
	}
	return reflect.ValueOf(out), key, ""
}

// scalarString renders a YAML scalar as a string (a YAML number or boolean
// given for a string key is taken as written).
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// describe names a value in a message.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case bool, int, int64, uint64, float64, time.Duration:
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("a value of type %T", v)
}

// suggest returns the known key closest to an unknown one, or "".
func (s *schema) suggest(unknown string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range s.keys {
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
