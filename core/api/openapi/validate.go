package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/sdk/go/kadu/manifest/toolschema"
)

// docURL names the document for the schema compiler; nothing is fetched.
const docURL = "https://kadu.invalid/api/v1/openapi.json"

// Validator checks answers against the document: tests use it to hold
// the handlers, and anything that imitates them, to what it says.
// It is safe for concurrent use.
type Validator struct {
	routes  []routeclass.Route
	schemas map[string]*jsonschema.Schema // by component name
}

// NewValidator compiles the document's schemas.
func NewValidator() (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Document()))
	if err != nil {
		return nil, fmt.Errorf("openapi: reading the document: %w", err)
	}
	c := toolschema.NewCompiler(func(ref string) error {
		return fmt.Errorf("the document may not reference %s: it is self-contained", ref)
	})
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	v := &Validator{routes: routeclass.Routes(), schemas: map[string]*jsonschema.Schema{}}
	for name := range components() {
		s, err := c.Compile(docURL + "#/components/schemas/" + name)
		if err != nil {
			return nil, fmt.Errorf("openapi: compiling schema %s: %w", name, err)
		}
		v.schemas[name] = s
	}
	return v, nil
}

// Route returns the row of the table a request's method and path (under
// the host, without query) reach, and whether there is one.
func (v *Validator) Route(method, path string) (routeclass.Route, bool) {
	segs := strings.Split(path, "/")
	for _, r := range v.routes {
		if r.Method != method {
			continue
		}
		tsegs := strings.Split(r.Path, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		match := true
		for i, s := range tsegs {
			if !strings.HasPrefix(s, "{") && s != segs[i] {
				match = false
				break
			}
		}
		if match {
			return r, true
		}
	}
	return routeclass.Route{}, false
}

// Check validates an answer: status and JSON body of a request with method
// to path. A success must be one of the route's statuses with a body valid
// against its response schema; an error (4xx, 5xx) must be an Error, on
// any path.
func (v *Validator) Check(method, path string, status int, body []byte) error {
	name := "Error"
	if status < 400 {
		r, ok := v.Route(method, path)
		if !ok {
			return fmt.Errorf("%s %s answered %d but is no route of the document", method, path, status)
		}
		if !slices.Contains(r.Statuses, status) {
			return fmt.Errorf("%s answered %d; the document lists %v", r, status, r.Statuses)
		}
		name = r.Response
	}
	return v.CheckSchema(name, body)
}

// CheckSchema validates body against the component schema name.
func (v *Validator) CheckSchema(name string, body []byte) error {
	s, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("openapi: no schema %s", name)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON (%w): %.200s", err, body)
	}
	if err := s.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("body does not match schema %s: %#v\nbody: %.2000s", name, ve, body)
		}
		return err
	}
	return nil
}
