package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decodeStrict decodes one JSON value into v, refusing unknown members and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			if path := unknownMember(data, reflect.TypeOf(v)); path != "" {
				return &unknownMemberError{path: path}
			}
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// unknownMemberError names a member the target type does not have, by its
// path ("rules[0].regex"); encoding/json names only the member itself.
type unknownMemberError struct{ path string }

func (e *unknownMemberError) Error() string { return "unknown member " + e.path }

// unknownMember returns the path of the first member of data (in key order)
// that t has no field for, or "".
func unknownMember(data []byte, t reflect.Type) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	return walkUnknown(v, t, "")
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func walkUnknown(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return ""
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				// encoding/json matches names case-insensitively too.
				for name, typ := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = typ, true
					}
				}
			}
			if !ok {
				return join(k)
			}
			if p := walkUnknown(m[k], ft, join(k)); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return ""
		}
		for i, e := range a {
			if p := walkUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for _, k := range sortedKeys(m) {
			if p := walkUnknown(m[k], t.Elem(), join(k)); p != "" {
				return p
			}
		}
	}
	return ""
}

// jsonErrPath extends at with the member a decoding error is about.
func jsonErrPath(at string, err error) string {
	join := func(field string) string {
		switch {
		case at == "":
			return field
		case field == "":
			return at
		}
		return at + "." + field
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return join(te.Field)
	}
	var ue *unknownMemberError
	if errors.As(err, &ue) {
		return join(ue.path)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return join(strings.Trim(f, `"`))
	}
	return at
}

func jsonErrMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want %s, got JSON %s", jsonKind(te.Type.Kind()), te.Value)
	}
	var ue *unknownMemberError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "json: unknown field ") {
		return "unknown member"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON (offset %d): %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "not valid JSON: unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Float64, reflect.Float32:
		return "a number"
	}
	return k.String()
}
