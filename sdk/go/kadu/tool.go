package kadu

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Tool is an MCP tool whose arguments decode into In and whose handler
// returns Out. Register it with Register; a *Tool works too.
type Tool[In, Out any] struct {
	// Name is unique across every bundle the server loads,
	// ^[a-zA-Z0-9_.-]{1,64}$. Prefix it with something of yours.
	Name string
	// Title is a short human name, e.g. "Run a task".
	Title string
	// Description is written for a model: what the tool does, when to use
	// it, what comes back, and which parts of it are untrusted data.
	Description string
	// InputSchema is the JSON Schema (draft 2020-12) of the arguments, a
	// JSON object with "type": "object". The host validates arguments
	// against it before the handler runs. ObjectSchema helps write one.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON Schema of the output; the result
	// then also carries the output as structuredContent, and Out must
	// encode to a JSON object. Destructive tools declare none: their first
	// answer is a confirmation request, not their output.
	OutputSchema json.RawMessage
	// Annotations are the behaviour hints clients rely on; required.
	Annotations *Annotations
	// Access is who may list and call the tool.
	Access Access
	// RequiresCapabilities lists the client capabilities ("elicitation",
	// "sampling", "roots") the tool always asks for with InputRequired; a
	// client that did not declare them gets -32021 before the tool runs.
	// Leave it empty for a tool that can do without (see
	// Call.HasCapability).
	RequiresCapabilities []string
	// Handler runs the tool. in holds the decoded arguments.
	Handler func(c *Call, in In) (Out, error)
}

// Annotations are a tool's behaviour hints. All of them are sent, as
// explicit booleans, since the protocol's defaults (destructive, open
// world) would mislead clients; openWorldHint is always false, because a
// bundle can reach nothing but the Kadu API.
type Annotations struct {
	// ReadOnly: the tool changes nothing.
	ReadOnly bool
	// Destructive: the tool deletes, cancels, runs work, re-sends, rotates
	// a secret, or changes who may do what or where data goes. Kadu asks
	// the person to confirm before such a tool runs.
	Destructive bool
	// Idempotent: calling again with the same arguments has no further
	// effect.
	Idempotent bool
}

// toolEntry is a registered tool, its types erased.
type toolEntry struct {
	name       string
	structured bool // declares an OutputSchema
	// run decodes args and calls the handler.
	run func(c *Call, args json.RawMessage) (any, error)
}

func (t Tool[In, Out]) addTo(r *registry) error {
	var errs []error
	if !manifest.IsEntryName(t.Name) {
		errs = append(errs, fmt.Errorf("Name: want ^[a-zA-Z0-9_.-]{1,64}$"))
	} else if r.tools[t.Name] != nil {
		errs = append(errs, errors.New("Name: registered twice"))
	}
	if err := checkObjectSchema(t.InputSchema); err != nil {
		errs = append(errs, fmt.Errorf("InputSchema: %w", err))
	}
	if len(t.OutputSchema) > 0 {
		if err := checkObjectSchema(t.OutputSchema); err != nil {
			errs = append(errs, fmt.Errorf("OutputSchema: %w", err))
		}
	}
	switch a := t.Annotations; {
	case a == nil:
		errs = append(errs, errors.New("Annotations: required (Kadu confirms destructive tools from them)"))
	case a.ReadOnly && a.Destructive:
		errs = append(errs, errors.New("Annotations: a tool cannot be both ReadOnly and Destructive"))
	case a.Destructive && len(t.OutputSchema) > 0:
		errs = append(errs, errors.New("OutputSchema: a Destructive tool declares none (its first answer is a confirmation request)"))
	}
	if err := t.Access.check(); err != nil {
		errs = append(errs, err)
	}
	for _, c := range t.RequiresCapabilities {
		if c != "elicitation" && c != "sampling" && c != "roots" {
			errs = append(errs, fmt.Errorf("RequiresCapabilities: %q: want elicitation, sampling or roots", c))
		}
	}
	if t.Handler == nil {
		errs = append(errs, errors.New("Handler: required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	a := t.Annotations
	// Every hint is sent as an explicit boolean (see Annotations), from a
	// copy: the manifest must not change with the caller's struct.
	hints := *a
	r.m.Tools = append(r.m.Tools, manifest.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  compact(t.InputSchema),
		OutputSchema: compact(t.OutputSchema),
		Annotations: &manifest.Annotations{ReadOnlyHint: &hints.ReadOnly, DestructiveHint: &hints.Destructive,
			IdempotentHint: &hints.Idempotent, OpenWorldHint: new(bool)},
		Access:               t.Access.def(),
		RequiresCapabilities: append([]string(nil), t.RequiresCapabilities...),
	})
	handler := t.Handler
	typed := newTyped(reflect.TypeFor[In]())
	r.tools[t.Name] = &toolEntry{
		name:       t.Name,
		structured: len(t.OutputSchema) > 0,
		run: func(c *Call, args json.RawMessage) (any, error) {
			var in In
			var err error
			if typed != nil {
				err = typed.decode(args, unsafe.Pointer(&in))
			} else {
				err = decodeArgs(args, &in)
			}
			if err != nil {
				return nil, ToolError(fmt.Sprintf("The arguments do not fit this tool (%v). Check them against its inputSchema and call it again.", err))
			}
			return handler(c, in)
		},
	}
	return nil
}

// decodeArgs decodes a tool's arguments into in, a *In. The arguments of
// route tools (a map of raw members) and of tools without any are split by
// a hand-written scanner, whose members alias args; any other In goes
// through encoding/json. A struct In that newTyped supports never gets
// here: its typedDecoder is built at Register.
func decodeArgs(args json.RawMessage, in any) error {
	switch p := in.(type) {
	case *map[string]json.RawMessage:
		if wire.IsNull(args) {
			*p = nil
			return nil
		}
		if *p == nil {
			*p = make(map[string]json.RawMessage, 4)
		}
		m := *p
		return wire.Object(args, false, func(key, v []byte) error {
			m[string(wire.Key(key))] = v
			return nil
		})
	case *struct{}:
		return wire.Object(args, true, nil)
	}
	return json.Unmarshal(args, in)
}
