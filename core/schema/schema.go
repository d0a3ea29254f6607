// Package schema compiles and checks JSON Schemas the one way Kadu does
// everywhere (task input schemas, bundle tool schemas, the arguments a
// person is asked to confirm): draft 2020-12 unless the schema says
// otherwise, format assertions on, and no reference outside the document,
// so that compiling never reads a file or the network.
//
// The compile options themselves live in sdk/go/kadu/manifest/toolschema
// (NewCompiler), so that the server and a partner's kadutest compile tool
// schemas alike. This package owns how a validation failure is described
// (one entry per failing location). It does not decide what a schema must
// look like at its root, nor how a failure is answered: each caller does.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/sdk/go/kadu/manifest/toolschema"
)

// Parse decodes one JSON document the way the validator reads instances
// (numbers kept exact).
func Parse(raw []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// Compile compiles doc (as Parse returns it). name says what the schema
// is ("input_schema"): the library's errors call the schema "kadu:<name>",
// and a reference outside it is refused as "<name> may not reference …".
// The error is the library's, for the caller to prefix.
func Compile(name string, doc any) (*jsonschema.Schema, error) {
	url := "kadu:" + name
	c := toolschema.NewCompiler(func(ref string) error {
		return fmt.Errorf("%s may not reference %s: schemas must be self-contained", name, ref)
	})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Failure is one location where an instance does not match.
type Failure struct {
	Location []string // the instance location, one token per step
	Detail   string   // what is wrong there, without the location
}

// Failures returns the innermost failures of a validation error (the ones
// that name a location and a reason, not "doesn't validate with …"), in
// the library's order; ok is false when err is not a validation error.
func Failures(err error) (_ []Failure, ok bool) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, false
	}
	var out []Failure
	for _, leaf := range leaves(ve) {
		detail := strings.TrimSpace(leaf.Error())
		if _, after, ok := strings.Cut(detail, "': "); ok && strings.HasPrefix(detail, "at '") {
			detail = after // Location already says where
		}
		out = append(out, Failure{Location: leaf.InstanceLocation, Detail: detail})
	}
	return out, true
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// Validate checks inst (as Parse returns it) against s. A failure is one
// error naming each failing location as a JSON pointer, sorted, e.g.
// "/input_file_ids/0: does not match pattern …; /text: got number, want
// string"; an error that is not a validation failure is returned as is.
func Validate(s *jsonschema.Schema, inst any) error {
	err := s.Validate(inst)
	if err == nil {
		return nil
	}
	fs, ok := Failures(err)
	if !ok {
		return err
	}
	msgs := make([]string, 0, len(fs))
	for _, f := range fs {
		msgs = append(msgs, Pointer(f.Location)+": "+f.Detail)
	}
	slices.Sort(msgs)
	return errors.New(strings.Join(slices.Compact(msgs), "; "))
}

// Pointer renders an instance location as an RFC 6901 JSON pointer; the
// root is "(root)" so that a message never starts with an empty location.
func Pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
