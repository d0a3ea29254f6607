package canonjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestTransform(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"sorted members, no whitespace", `{ "b": 1, "a": [true, null, "x"] }`, `{"a":[true,null,"x"],"b":1}`},
		{"1 and 1.0 alike", `[1, 1.0, 1.00e0, 10e-1]`, `[1,1,1,1]`},
		{"negative zero", `-0.0`, `0`},
		{"large and small numbers", `[1e21, 1e20, 0.000001, 0.0000001, 123456789012345680000]`, `[1e+21,100000000000000000000,0.000001,1e-7,123456789012345680000]`},
		{"fractions", `[0.1, 3.14159, -2.5e-8]`, `[0.1,3.14159,-2.5e-8]`},
		{"escapes are minimal", `"\u0041\u00e9\/\n\u001f\""`, `"Aé/\n\u001f\""`},
		{"nested objects", `{"z":{"y":2,"x":1},"a":{}}`, `{"a":{},"z":{"x":1,"y":2}}`},
		// RFC 8785 §3.2.3: UTF-16 order puts U+1F600 (surrogates D83D…) before U+FB33.
		{"UTF-16 key order", `{"\ufb33":1,"\ud83d\ude00":2,"a":3}`, "{\"a\":3,\"\U0001F600\":2,\"\uFB33\":1}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Transform([]byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Fatalf("Transform(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestTransformRefuses(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {"b":2}`, `1e400`, `[NaN]`} {
		if _, err := Transform([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Transform(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

// FuzzTransform checks that canonical output is valid JSON, equal in value
// to the input, and a fixed point.
func FuzzTransform(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":2}`, `[1.0,2e3,-0]`, `"\u00e9"`, `{"a":{"b":[null,true]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Transform(%q) = %q: not JSON", in, out)
		}
		again, err := Transform(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q → %q (%v)", out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) == nil && json.Unmarshal(out, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed: %q vs %q", in, out)
		}
	})
}
