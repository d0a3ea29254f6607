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

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringsType  = reflect.TypeFor[[]string]()
)

// supported reports whether decode handles t (named string types such as
// Secret and DSN included).
func supported(t reflect.Type) bool {
	switch {
	case t == durationType, t == stringsType:
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
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
	case reflect.Float64:
		f, msg := toFloat(v)
		if msg != "" {
			return out, key, msg
		}
		out.SetFloat(f)
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

func toFloat(v any) (float64, string) {
	switch x := v.(type) {
	case float64:
		return x, ""
	case int:
		return float64(x), ""
	case int64:
		return float64(x), ""
	case uint64:
		return float64(x), ""
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, ""
		}
	}
	return 0, fmt.Sprintf("%s is not a number (want a decimal such as 0.25)", describe(v))
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
