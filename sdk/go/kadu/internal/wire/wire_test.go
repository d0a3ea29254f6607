package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzValid checks the validating scanner against json.Valid.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2.5e-3,-0,"a\u00e9\ud83d\ude00",true,false,null,{"a":[]}]`, `{"a":1,}`, `[01]`, `"\x01"`, `1.`, `-`, `"\uZZZZ"`, ` {"a" : "b" } `, `{"a":1}x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("Valid(%q) = %v; json.Valid says %v", s, got, want)
		}
	})
}

// FuzzUnquoteString checks the string decoder against encoding/json:
// invalid UTF-8 and lone surrogates become U+FFFD, as there.
func FuzzUnquoteString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"é\xff"`, `"\ud800"`, `"\ud83d\ude00"`, `"\ud800\u0041"`, `"\"\\\/\b\f\n\r\t"`, `"x`, `"a"b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want string
		wantErr := json.Unmarshal([]byte(s), &want)
		got, ok := UnquoteString([]byte(s))
		if ok != (wantErr == nil && len(s) > 0 && s[0] == '"' && s[len(s)-1] == '"') {
			t.Fatalf("UnquoteString(%q) ok = %v; encoding/json says %v", s, ok, wantErr)
		}
		if ok && got != want {
			t.Fatalf("UnquoteString(%q) = %q; encoding/json says %q", s, got, want)
		}
	})
}

// FuzzObjectMembers checks splitting an object into raw members against
// encoding/json decoding into a map[string]json.RawMessage.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true],"a":"x"}`, `{"\u00e9":{"c":null}}`, `null`, `[]`, `{"a":}`, ` { } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal([]byte(s), &want)
		var got map[string]json.RawMessage
		gotErr := Object([]byte(s), true, func(key, v []byte) error {
			if got == nil {
				got = map[string]json.RawMessage{}
			}
			got[string(Key(key))] = v
			return nil
		})
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("Object(%q) error = %v; encoding/json says %v", s, gotErr, wantErr)
		}
		if gotErr == nil && len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("Object(%q) = %q; encoding/json says %q", s, got, want)
		}
	})
}

func TestCompact(t *testing.T) {
	in := " { \"a b\" : [ 1 , \"x \\\" y\" ] , \"c\" :\n{ } } "
	if got, want := string(Compact(nil, []byte(in))), `{"a b":[1,"x \" y"],"c":{}}`; got != want {
		t.Errorf("Compact = %s; want %s", got, want)
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-1.5e3": true, "1E+2": true, "01": false, "1.": false, "-": false, "": false, "1 ": false, "x": false} {
		if got := IsNumber([]byte(s)); got != want {
			t.Errorf("IsNumber(%q) = %v; want %v", s, got, want)
		}
	}
}

func TestStops(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			x := load8(w, 0)
			wantString := c == '"' || c == '\\' || c < 0x20
			if got := stringStops(x); got != wantString {
				t.Errorf("stringStops(byte %#x at %d) = %v", c, pos, got)
			}
			if got := escapeStops(x); got != (wantString || c >= 0x80) {
				t.Errorf("escapeStops(byte %#x at %d) = %v", c, pos, got)
			}
		}
	}
}

// TestArray checks that Array yields each element of a checked array as
// its raw bytes, and refuses anything else.
func TestArray(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`[]`, nil, false},
		{`[ ]`, nil, false},
		{`["a", 1 ,{"b":[2]}, null]`, []string{`"a"`, `1`, `{"b":[2]}`, `null`}, false},
		{`[[],[[]]]`, []string{`[]`, `[[]]`}, false},
		{`{}`, nil, true},
		{`"a"`, nil, true},
	} {
		var got []string
		err := Array([]byte(tc.in), func(v []byte) error {
			got = append(got, string(v))
			return nil
		})
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Array(%s) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
