package kadutest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
	"github.com/kobana/kadu/sdk/go/kadu/manifest/toolschema"
)

// The manifest's types, the output of kadu_describe (sdk/ABI.md §10), are
// package manifest's: the server loads a bundle by the same types and
// rules.
type (
	Manifest         = manifest.Manifest
	ManifestTool     = manifest.Tool
	Annotations      = manifest.Annotations
	Access           = manifest.Access
	ManifestResource = manifest.Resource
	ManifestTemplate = manifest.ResourceTemplate
	ManifestPrompt   = manifest.Prompt
)

// ParseManifest decodes a manifest as the server does.
func ParseManifest(raw []byte) (*Manifest, error) { return manifest.Parse(raw) }

// CheckManifest applies the server's load rules (manifest.Check, schemas
// compiled as the server compiles them) and returns the server's error
// when it would refuse the bundle. A manifest the server accepts is then
// held to the SDKs' conventions, where kadutest is stricter than the
// server: every tool carries readOnlyHint, destructiveHint and
// idempotentHint as explicit booleans and openWorldHint false (the server
// fills omitted ones with safe defaults), and no route is listed twice.
func CheckManifest(m *Manifest) error {
	if _, err := m.Check(manifest.Options{CompileSchema: toolschema.CompileAny}); err != nil {
		return err
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("manifest: "+format, args...)) }
	for i, t := range m.Tools {
		at := fmt.Sprintf("tools[%d] (%s)", i, t.Name)
		switch a := t.Annotations; {
		case a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil:
			fail("%s.annotations: want readOnlyHint, destructiveHint and idempotentHint as booleans", at)
		case a.OpenWorldHint != nil && *a.OpenWorldHint:
			fail("%s.annotations.openWorldHint: must be false: a bundle reaches only the Kadu API", at)
		}
	}
	for i, r := range m.Routes {
		if slices.Index(m.Routes, r) != i {
			fail("routes[%d]: %q listed twice", i, r)
		}
	}
	return errors.Join(errs...)
}

// CompileSchema compiles raw as the server compiles a tool schema
// (manifest/toolschema).
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	return toolschema.Compile(raw)
}

// CheckUnique reports tool and prompt names, resource URIs and templates
// that more than one of ms declares: the host refuses a bundle that
// clashes with one already loaded.
func CheckUnique(ms ...*Manifest) error {
	var errs []error
	owner := map[string]string{}
	claim := func(kind, key, bundle string) {
		k := kind + " " + key
		if prev, ok := owner[k]; ok && prev != bundle {
			errs = append(errs, fmt.Errorf("%s %q is declared by %s and %s", kind, key, prev, bundle))
		}
		owner[k] = bundle
	}
	for _, m := range ms {
		for _, t := range m.Tools {
			claim("tool", t.Name, m.Name)
		}
		for _, p := range m.Prompts {
			claim("prompt", p.Name, m.Name)
		}
		for _, r := range m.Resources {
			claim("resource", r.URI, m.Name)
		}
		for _, r := range m.ResourceTemplates {
			claim("resource", r.URITemplate, m.Name)
		}
	}
	return errors.Join(errs...)
}
