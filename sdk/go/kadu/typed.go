package kadu

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// A typedDecoder decodes a tool's arguments into a struct In without
// reflection: Register builds it once from In's reflect.Type (field
// offsets, names and a setter per field kind), and each call walks the
// arguments with the wire scanner, writing the fields through unsafe
// pointers. Under wazero's per-call deadline a pass of encoding/json costs
// tens of microseconds; this costs a few.
//
// It decodes exactly what encoding/json would, or is not built: newTyped
// returns nil for any struct it does not fully understand (embedded
// fields, maps, interfaces, nested structs, ",string", name conflicts,
// json.Number, a type with its own UnmarshalJSON or UnmarshalText), and
// the tool keeps using encoding/json.
type typedDecoder struct {
	typ    string // In's name, for errors
	fields []typedField
}

type typedField struct {
	name   string // the JSON name
	folded []byte // name as encoding/json folds it for case-insensitive matching
	goName string
	offset uintptr
	kind   string // for errors: "a string", "an integer"...
	set    func(p unsafe.Pointer, v []byte) error
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
)

// errTypedValue is the error of a value of the wrong JSON type or out of
// its field's range; the field's name is added by decode.
var errTypedValue = errors.New("wrong type or out of range")

// customDecoding reports whether encoding/json would hand t to a method of
// its own rather than decode it by kind.
func customDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// newTyped returns the decoder of t, or nil when t is not a struct it
// decodes exactly as encoding/json does.
func newTyped(t reflect.Type) *typedDecoder {
	if t.Kind() != reflect.Struct || customDecoding(t) {
		return nil
	}
	d := &typedDecoder{typ: t.Name()}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // embedded structs promote fields: encoding/json's rules are subtle
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !isValidTag(name) {
			name = sf.Name
		}
		for _, o := range strings.Split(opts, ",") {
			if o == "string" {
				return nil
			}
		}
		if seen[name] {
			return nil // encoding/json drops or picks by tag: leave it to it
		}
		seen[name] = true
		set, kind := setterFor(sf.Type)
		if set == nil {
			return nil
		}
		d.fields = append(d.fields, typedField{
			name: name, folded: appendFoldedName(nil, []byte(name)), goName: sf.Name,
			offset: sf.Offset, kind: kind, set: set,
		})
	}
	return d
}

// decode decodes args, a JSON document, into the struct at p as
// json.Unmarshal does.
func (d *typedDecoder) decode(args []byte, p unsafe.Pointer) error {
	return wire.Object(args, true, func(q, v []byte) error {
		f := d.field(wire.Key(q))
		if f == nil {
			return nil
		}
		if err := f.set(unsafe.Add(p, f.offset), v); err != nil {
			return fmt.Errorf("field %q (%s.%s) wants %s, not %.40s", f.name, d.typ, f.goName, f.kind, v)
		}
		return nil
	})
}

// field returns the field key names as encoding/json picks it: the one of
// that exact name, else the first whose name folds to the same.
func (d *typedDecoder) field(key []byte) *typedField {
	for i := range d.fields {
		if d.fields[i].name == string(key) {
			return &d.fields[i]
		}
	}
	var arr [32]byte
	folded := appendFoldedName(arr[:0], key)
	for i := range d.fields {
		if string(d.fields[i].folded) == string(folded) {
			return &d.fields[i]
		}
	}
	return nil
}

// setterFor returns the setter of a field of type t and what it holds, or
// nil when t is not supported.
func setterFor(t reflect.Type) (func(unsafe.Pointer, []byte) error, string) {
	if t == rawMessageType {
		return func(p unsafe.Pointer, v []byte) error {
			m := (*json.RawMessage)(p)
			*m = append((*m)[:0], v...)
			return nil
		}, "JSON"
	}
	if customDecoding(t) || t == numberType {
		return nil, ""
	}
	switch t.Kind() {
	case reflect.Pointer:
		e := t.Elem()
		set, kind := scalarSetter(e)
		alloc := allocFor(e.Kind())
		if set == nil || alloc == nil || customDecoding(e) || e == numberType {
			return nil, ""
		}
		return func(p unsafe.Pointer, v []byte) error {
			pp := (*unsafe.Pointer)(p)
			if v[0] == 'n' {
				*pp = nil
				return nil
			}
			if *pp == nil {
				*pp = alloc()
			}
			return set(*pp, v)
		}, kind + " or null"
	case reflect.Slice:
		e := t.Elem()
		if e.Kind() != reflect.String || customDecoding(e) || e == numberType {
			return nil, ""
		}
		return setStrings, "an array of strings"
	}
	return scalarSetter(t)
}

func scalarSetter(t reflect.Type) (func(unsafe.Pointer, []byte) error, string) {
	switch t.Kind() {
	case reflect.String:
		return func(p unsafe.Pointer, v []byte) error {
			if wire.String(v, (*string)(p)) != nil {
				return errTypedValue
			}
			return nil
		}, "a string"
	case reflect.Bool:
		return setBool, "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return func(p unsafe.Pointer, v []byte) error {
			n, ok, err := parseInt(v, bits)
			if err != nil || !ok {
				return err
			}
			switch bits {
			case 8:
				*(*int8)(p) = int8(n)
			case 16:
				*(*int16)(p) = int16(n)
			case 32:
				*(*int32)(p) = int32(n)
			default:
				*(*int64)(p) = n
			}
			return nil
		}, "an integer that fits " + t.Kind().String()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := t.Bits()
		return func(p unsafe.Pointer, v []byte) error {
			n, ok, err := parseUint(v, bits)
			if err != nil || !ok {
				return err
			}
			switch bits {
			case 8:
				*(*uint8)(p) = uint8(n)
			case 16:
				*(*uint16)(p) = uint16(n)
			case 32:
				*(*uint32)(p) = uint32(n)
			default:
				*(*uint64)(p) = n
			}
			return nil
		}, "a non-negative integer that fits " + t.Kind().String()
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(p unsafe.Pointer, v []byte) error {
			if v[0] == 'n' {
				return nil
			}
			if !isNumberStart(v[0]) {
				return errTypedValue
			}
			f, err := strconv.ParseFloat(string(v), bits)
			if err != nil {
				return errTypedValue
			}
			if bits == 32 {
				*(*float32)(p) = float32(f)
			} else {
				*(*float64)(p) = f
			}
			return nil
		}, "a number that fits " + t.Kind().String()
	}
	return nil, ""
}

// allocFor returns a function that allocates a zero value of kind k: the
// memory of a named type is laid out as that of its kind.
func allocFor(k reflect.Kind) func() unsafe.Pointer {
	switch k {
	case reflect.String:
		return func() unsafe.Pointer { return unsafe.Pointer(new(string)) }
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return func() unsafe.Pointer { return unsafe.Pointer(new(uint8)) }
	case reflect.Int16, reflect.Uint16:
		return func() unsafe.Pointer { return unsafe.Pointer(new(uint16)) }
	case reflect.Int32, reflect.Uint32, reflect.Float32:
		return func() unsafe.Pointer { return unsafe.Pointer(new(uint32)) }
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Float64:
		return func() unsafe.Pointer { return unsafe.Pointer(new(uint64)) }
	}
	return nil
}

func setBool(p unsafe.Pointer, v []byte) error {
	switch v[0] {
	case 't':
		*(*bool)(p) = true
	case 'f':
		*(*bool)(p) = false
	case 'n':
	default:
		return errTypedValue
	}
	return nil
}

// setStrings decodes into a []string as encoding/json does: null sets nil;
// an array reuses the slice's backing array (elements that are null keep
// what was there) and an empty array sets an empty, non-nil slice.
func setStrings(p unsafe.Pointer, v []byte) error {
	sp := (*[]string)(p)
	switch v[0] {
	case 'n':
		*sp = nil
		return nil
	case '[':
	default:
		return errTypedValue
	}
	s := *sp
	i := 0
	err := wire.Array(v, func(e []byte) error {
		if i >= cap(s) {
			s = append(s[:i], "")
		} else {
			s = s[:i+1]
		}
		*sp = s
		i++
		if wire.String(e, &s[i-1]) != nil {
			return errTypedValue
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i == 0 {
		s = []string{}
	}
	*sp = s[:i]
	return nil
}

func isNumberStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

// parseInt parses v, a checked JSON value, as encoding/json decodes it into
// an int of bits: null is no value (ok false), a number with a fraction or
// exponent or out of range is an error.
func parseInt(v []byte, bits int) (n int64, ok bool, err error) {
	if v[0] == 'n' {
		return 0, false, nil
	}
	if !isNumberStart(v[0]) {
		return 0, false, errTypedValue
	}
	if len(v) <= 18 {
		neg := v[0] == '-'
		digits := v
		if neg {
			digits = v[1:]
		}
		simple := len(digits) > 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				simple = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if simple {
			if neg {
				n = -n
			}
			if bits < 64 && (n < -1<<(bits-1) || n >= 1<<(bits-1)) {
				return 0, false, errTypedValue
			}
			return n, true, nil
		}
	}
	n, err = strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		return 0, false, errTypedValue
	}
	return n, true, nil
}

// parseUint is parseInt for unsigned integers: any sign is an error.
func parseUint(v []byte, bits int) (n uint64, ok bool, err error) {
	if v[0] == 'n' {
		return 0, false, nil
	}
	if !isNumberStart(v[0]) {
		return 0, false, errTypedValue
	}
	if len(v) <= 19 {
		simple := true
		for _, c := range v {
			if c < '0' || c > '9' {
				simple = false
				break
			}
			n = n*10 + uint64(c-'0')
		}
		if simple {
			if bits < 64 && n >= 1<<bits {
				return 0, false, errTypedValue
			}
			return n, true, nil
		}
	}
	n, err = strconv.ParseUint(string(v), 10, bits)
	if err != nil {
		return 0, false, errTypedValue
	}
	return n, true, nil
}

// isValidTag is encoding/json's rule for a usable name in a json tag.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// appendFoldedName is encoding/json's case folding of member names: ASCII
// upper-cased, other runes replaced by the smallest of their fold orbit.
func appendFoldedName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
