package kadu

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// typedAll holds every kind the typed decoder supports.
type typedAll struct {
	S      string          `json:"s"`
	B      bool            `json:"b,omitempty"`
	I      int             `json:"i"`
	I8     int8            `json:"i8"`
	I16    int16           `json:"i16"`
	I32    int32           `json:"i32"`
	I64    int64           `json:"i64"`
	U      uint            `json:"u"`
	U8     uint8           `json:"u8"`
	U16    uint16          `json:"u16"`
	U32    uint32          `json:"u32"`
	U64    uint64          `json:"u64"`
	F32    float32         `json:"f32"`
	F64    float64         `json:"f64"`
	Raw    json.RawMessage `json:"raw"`
	List   []string        `json:"list"`
	PS     *string         `json:"ps"`
	PI     *int            `json:"pi"`
	PB     *bool           `json:"pb"`
	PF     *float64        `json:"pf"`
	Plain  string          // no tag: its Go name
	Dash   string          `json:"-"`
	Dash2  string          `json:"-,"`
	Bad    string          `json:"a\"b"` // invalid tag name: Go name
	Kelvin string          `json:"k"`    // "K" (U+212A) folds to k
	Name   myString        `json:"name"`
	secret string
}

type myString string

func decodeBoth(t testing.TB, in string) (got, want typedAll, gotErr, wantErr error) {
	t.Helper()
	d := newTyped(reflect.TypeFor[typedAll]())
	if d == nil {
		t.Fatal("typedAll is not supported")
	}
	gotErr = d.decode([]byte(in), unsafe.Pointer(&got))
	wantErr = json.Unmarshal([]byte(in), &want)
	return
}

func TestTypedArgumentsMatchEncodingJSON(t *testing.T) {
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"all", `{"s":"x","b":true,"i":-3,"i8":127,"i16":-32768,"i32":5,"i64":9007199254740993,"u":1,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"f32":1.5,"f64":-2e-3,"raw":{"a": [1, 2]},"list":["a","b"],"ps":"p","pi":4,"pb":false,"pf":0.1,"Plain":"pl","name":"n"}`, true},
		{"null args", `null`, true},
		{"empty", `{}`, true},
		{"not an object", `[]`, false},
		{"string args", `"x"`, false},
		{"invalid", `{"s":}`, false},
		{"trailing data", `{} {}`, false},
		{"case-insensitive", `{"S":"x","PLAIN":"y","Name":"z"}`, true},
		{"exact beats fold", `{"Plain":"exact","plain":"fold"}`, true},
		{"fold then exact", `{"plain":"fold","Plain":"exact"}`, true},
		{"kelvin sign", `{"\u212a":"kelvin"}`, true},
		{"last duplicate wins", `{"s":"a","s":"b"}`, true},
		{"unknown ignored", `{"zz":{"deep":[1,2,{"x":null}]},"s":"a"}`, true},
		{"null leaves alone", `{"s":"a","s":null,"i":1,"i":null,"b":true,"b":null,"f64":1,"f64":null}`, true},
		{"null raw", `{"raw":null}`, true},
		{"null pointer", `{"ps":"a","ps":null}`, true},
		{"pointer reuse", `{"pi":1,"pi":2}`, true},
		{"fraction into int", `{"i":1.5}`, false},
		{"exponent into int", `{"i":1e2}`, false},
		{"int8 overflow", `{"i8":128}`, false},
		{"int8 underflow", `{"i8":-129}`, false},
		{"int64 overflow", `{"i64":9223372036854775808}`, false},
		{"uint negative", `{"u":-1}`, false},
		{"uint minus zero", `{"u":-0}`, false},
		{"int minus zero", `{"i":-0}`, true},
		{"uint8 overflow", `{"u8":256}`, false},
		{"uint64 overflow", `{"u64":18446744073709551616}`, false},
		{"float32 overflow", `{"f32":1e39}`, false},
		{"float underflow", `{"f64":1e-400}`, true},
		{"string into int", `{"i":"1"}`, false},
		{"number into string", `{"s":1}`, false},
		{"bool into string", `{"s":true}`, false},
		{"object into string", `{"s":{}}`, false},
		{"string into bool", `{"b":"true"}`, false},
		{"escapes", `{"s":"a\u00e9\ud83d\ude00\n\"\\\/"}`, true},
		{"lone surrogate", `{"s":"\ud800x"}`, true},
		{"invalid utf8", "{\"s\":\"a\xffb\"}", true},
		{"escaped key", `{"\u0073":"x"}`, true},
		{"list null", `{"list":["a"],"list":null}`, true},
		{"list empty", `{"list":[]}`, true},
		{"list reuse", `{"list":["a","b"],"list":["c"],"list":[null,null]}`, true},
		{"list with number", `{"list":["a",1]}`, false},
		{"list not array", `{"list":"a"}`, false},
		{"dash ignored", `{"-":"x","Dash":"y"}`, true},
		{"bad tag uses go name", `{"Bad":"x"}`, true},
		{"unexported ignored", `{"secret":"x"}`, true},
		{"whitespace", " {\n\t\"s\" : \"x\" , \"raw\" : [ 1 , 2 ] } ", true},
		{"deep nesting", `{"zz":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, want, gotErr, wantErr := decodeBoth(t, tc.in)
			if (wantErr == nil) != tc.ok {
				t.Fatalf("encoding/json: err %v, the case says ok=%v", wantErr, tc.ok)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("typed err %v, encoding/json err %v", gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("typed %+v\nencoding/json %+v", got, want)
			}
		})
	}
}

func TestTypedErrorNamesTheField(t *testing.T) {
	var v typedAll
	err := newTyped(reflect.TypeFor[typedAll]()).decode([]byte(`{"i8":300}`), unsafe.Pointer(&v))
	if err == nil || !strings.Contains(err.Error(), `"i8"`) {
		t.Fatalf("err %v: want it to name the field i8", err)
	}
}

type withEmbedded struct {
	typedAll
}
type withMap struct{ M map[string]string }
type withAny struct{ A any }
type withStruct struct{ N struct{ X int } }
type withTime struct{ T time.Time }
type withQuoted struct {
	N int `json:"n,string"`
}
type withConflict struct {
	A string `json:"X"`
	X string // the same name untagged: encoding/json keeps A
}
type withNumber struct{ N json.Number }
type withBytes struct{ B []byte }
type withText struct{ T textOnly }
type textOnly string

func (t *textOnly) UnmarshalText([]byte) error { return nil }

type selfDecoding struct{ S string }

func (s *selfDecoding) UnmarshalJSON([]byte) error { return nil }

// TestTypedFallsBack checks that every struct the typed decoder does not
// fully understand is left to encoding/json.
func TestTypedFallsBack(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withEmbedded](), reflect.TypeFor[withMap](), reflect.TypeFor[withAny](),
		reflect.TypeFor[withStruct](), reflect.TypeFor[withTime](), reflect.TypeFor[withQuoted](),
		reflect.TypeFor[withConflict](), reflect.TypeFor[withNumber](), reflect.TypeFor[withBytes](),
		reflect.TypeFor[withText](), reflect.TypeFor[selfDecoding](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[[]int](), reflect.TypeFor[*int](),
	} {
		if newTyped(typ) != nil {
			t.Errorf("%v: got a typed decoder, want encoding/json", typ)
		}
	}
}

// TestTypedToolUsesTypedDecoder checks the decoder behind a registered
// tool: arguments reach the handler and a bad one is a ToolError that
// names the field.
func TestTypedToolUsesTypedDecoder(t *testing.T) {
	type in struct {
		Message string `json:"message"`
		N       int    `json:"n"`
	}
	var got in
	tool := Tool[in, string]{
		Name: "t", InputSchema: ObjectSchema(), Annotations: &Annotations{ReadOnly: true},
		Access:  Access{MinRole: RoleViewer, Scope: ScopeRead},
		Handler: func(_ *Call, v in) (string, error) { got = v; return "", nil },
	}
	r := &registry{tools: map[string]*toolEntry{}}
	if err := tool.addTo(r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tools["t"].run(nil, json.RawMessage(`{"MESSAGE":"hi","n":2}`)); err != nil {
		t.Fatal(err)
	}
	if got != (in{"hi", 2}) {
		t.Fatalf("handler got %+v", got)
	}
	_, err := r.tools["t"].run(nil, json.RawMessage(`{"n":2.5}`))
	if err == nil || !strings.Contains(err.Error(), "The arguments do not fit this tool (") || !strings.Contains(err.Error(), `"n"`) {
		t.Fatalf("err %v", err)
	}
}

// FuzzTypedArguments checks that the typed decoder and encoding/json agree
// on every input: both fail, or both succeed with the same value.
func FuzzTypedArguments(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","b":true,"i":-3,"i8":127,"u8":255,"f32":1.5,"raw":{"a":1},"list":["a"],"ps":"p","pi":4}`,
		`{"S":"a","s":null,"plain":"x","Plain":"y","\u212a":"k"}`,
		`{"list":["a","b"],"list":["c"],"list":[null,null]}`,
		`{"i":1.0,"u":-0,"i64":9223372036854775807}`,
		`{"s":"\ud800\udc00\u00e9\\"}`,
		`null`, `[]`, `{`, `{"pf":1e400}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, want, gotErr, wantErr := decodeBoth(t, in)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: typed err %v, encoding/json err %v", in, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ntyped %+v\nencoding/json %+v", in, got, want)
		}
	})
}

// BenchmarkTypedArguments compares decoding the echo bundle's arguments
// with the typed decoder and with encoding/json, natively.
func BenchmarkTypedArguments(b *testing.B) {
	type echoIn struct {
		Message string `json:"message"`
	}
	args := []byte(`{"message":"hello, world"}`)
	b.Run("typed", func(b *testing.B) {
		d := newTyped(reflect.TypeFor[echoIn]())
		b.ReportAllocs()
		for b.Loop() {
			var in echoIn
			if err := d.decode(args, unsafe.Pointer(&in)); err != nil || in.Message == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in echoIn
			if err := json.Unmarshal(args, &in); err != nil || in.Message == "" {
				b.Fatal(err)
			}
		}
	})
}

// TestTypedFoldPicksFirstField checks that a key matching no field
// exactly goes, as in encoding/json, to the first field whose name folds
// to the same.
func TestTypedFoldPicksFirstField(t *testing.T) {
	type twoKs struct {
		Lower string `json:"k"`
		Upper string `json:"K"`
	}
	for _, in := range []string{`{"\u212a":"kelvin"}`, `{"k":"l","K":"u"}`, `{"K":"u","\u212a":"kelvin"}`} {
		var got, want twoKs
		d := newTyped(reflect.TypeFor[twoKs]())
		if d == nil {
			t.Fatal("twoKs is not supported")
		}
		if err := d.decode([]byte(in), unsafe.Pointer(&got)); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: typed %+v, encoding/json %+v", in, got, want)
		}
	}
}
