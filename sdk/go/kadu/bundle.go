package kadu

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// ABIVersion is the ABI this SDK implements; the manifest's "abi".
const ABIVersion = manifest.ABIVersion

// Bundle names a bundle and the API routes it calls.
type Bundle struct {
	// Name is the bundle's name, ^[a-z][a-z0-9_]{0,31}$; the operator's
	// config refers to it.
	Name string
	// Version is the bundle's Semantic Version, e.g. "1.2.0".
	Version string
	// Description is shown to operators.
	Description string
	// Routes are the API routes the bundle calls, "METHOD /path" with
	// {name} for one path segment, e.g. "GET /api/v1/tasks/{id}". The host
	// refuses any other request, and refuses the bundle if the operator did
	// not grant them all.
	Routes []string
}

// Feature is something a bundle offers: a Tool, Resource,
// ResourceTemplate, Prompt or Completion.
type Feature interface {
	// addTo checks the definition and adds it to r.
	addTo(r *registry) error
}

// Register builds the bundle from b and features and installs it as this
// module's bundle. Call it once, from a func init in the bundle's main
// package (see the package documentation for why there).
//
// Register panics when a definition breaks a rule of sdk/ABI.md §10 (the
// host would refuse the bundle) or when a bundle is already registered.
// Features must not be modified after the call.
func Register(b Bundle, features ...Feature) {
	s, err := newServer(b, features)
	if err != nil {
		panic("kadu.Register: " + err.Error())
	}
	if !abi.Register(s) {
		panic("kadu.Register: a bundle is already registered; a module is one bundle")
	}
	tuneRuntime()
}

// registry collects what the features add, checking uniqueness.
type registry struct {
	m         manifest.Manifest
	tools     map[string]*toolEntry
	resources map[string]*Resource
	templates []*templateEntry
	prompts   map[string]*Prompt
	complete  *Completion
}

// newServer checks b and features and builds the bundle they describe,
// manifest included.
func newServer(b Bundle, features []Feature) (*server, error) {
	var errs []error
	if !manifest.IsBundleName(b.Name) {
		errs = append(errs, fmt.Errorf("Bundle.Name %q: want ^[a-z][a-z0-9_]{0,31}$", b.Name))
	}
	if !manifest.IsSemver(b.Version) {
		errs = append(errs, fmt.Errorf("Bundle.Version %q: want a semantic version such as 1.0.0", b.Version))
	}
	seen := map[string]bool{}
	for i, rt := range b.Routes {
		if _, err := manifest.ParseRoute(rt); err != nil {
			errs = append(errs, fmt.Errorf("Bundle.Routes[%d] %q: %w", i, rt, err))
		}
		if seen[rt] {
			errs = append(errs, fmt.Errorf("Bundle.Routes[%d] %q: listed twice", i, rt))
		}
		seen[rt] = true
	}
	r := &registry{
		m: manifest.Manifest{
			ABI:         ABIVersion,
			Name:        b.Name,
			Version:     b.Version,
			Description: b.Description,
			Tools:       []manifest.Tool{},
			Routes:      append([]string{}, b.Routes...),
		},
		tools:     map[string]*toolEntry{},
		resources: map[string]*Resource{},
		prompts:   map[string]*Prompt{},
	}
	for i, f := range features {
		if f == nil {
			errs = append(errs, fmt.Errorf("feature %d is nil", i))
			continue
		}
		if err := f.addTo(r); err != nil {
			errs = append(errs, err)
		}
	}
	if len(r.m.Tools)+len(r.m.Resources)+len(r.m.ResourceTemplates)+len(r.m.Prompts) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("features: want at least one Tool, Resource, ResourceTemplate or Prompt (the host refuses a bundle that offers nothing)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &server{
		m:         r.m,
		tools:     r.tools,
		resources: r.resources,
		templates: r.templates,
		prompts:   r.prompts,
		complete:  r.complete,
	}, nil
}

// checkObjectSchema checks that raw is a JSON object whose "type" is
// "object", as MCP requires of inputSchema and outputSchema. Whether the
// schema compiles is for the host (and kadutest) to check: a guest carries
// no schema compiler.
//
// It scans by hand: Register runs inside _initialize, once per instance.
func checkObjectSchema(raw json.RawMessage) error {
	var typ []byte
	err := wire.Object(raw, false, func(key, v []byte) error {
		if string(wire.Key(key)) == "type" {
			typ = v
		}
		return nil
	})
	if err != nil {
		return errors.New("must be a JSON object (a JSON Schema)")
	}
	var s string
	if typ == nil || wire.String(typ, &s) != nil || s != "object" {
		return errors.New(`must have "type": "object" at the root`)
	}
	return nil
}
