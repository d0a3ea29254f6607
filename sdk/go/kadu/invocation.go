package kadu

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// invocation is the input of kadu_handle (sdk/ABI.md §7). decodeInvocation
// fills it in one pass, without reflection; the JSON tags say which member
// each field holds, and the fuzz test checks the decoder against
// encoding/json with them.
type invocation struct {
	Op             string                     `json:"op"`
	Params         params                     `json:"params"`
	InputResponses map[string]json.RawMessage `json:"input_responses"`
	State          json.RawMessage            `json:"state"`
	Client         json.RawMessage            `json:"client"` // decoded by Call.Client on first use
}

// params holds the params of every op; each op reads its own members. The
// members of completion/complete stay raw until that op decodes them.
type params struct {
	Name      string          `json:"name"`      // tools/call, prompts/get
	Arguments json.RawMessage `json:"arguments"` // tools/call (any object), prompts/get (strings)
	URI       string          `json:"uri"`       // resources/read
	Ref       json.RawMessage `json:"ref"`       // completion/complete
	Argument  json.RawMessage `json:"argument"`  // completion/complete
	Context   json.RawMessage `json:"context"`   // completion/complete
}

// decodeInvocation decodes in into inv as json.Unmarshal would: members
// matched by name (exactly, else case-insensitively), unknown members
// skipped, null leaving a field alone (a raw field keeps "null"), a
// repeated member decoded again over the first. The raw fields alias in.
func decodeInvocation(in []byte, inv *invocation) error {
	return wire.Object(in, true, func(key, v []byte) error {
		k := wire.Key(key)
		var err error
		switch {
		case wire.Match(k, "op"):
			err = wire.String(v, &inv.Op)
		case wire.Match(k, "params"):
			err = wire.Object(v, true, func(key, v []byte) error { return inv.Params.member(wire.Key(key), v) })
		case wire.Match(k, "input_responses"):
			err = wire.RawMap(v, &inv.InputResponses)
		case wire.Match(k, "state"):
			wire.Raw(v, &inv.State)
		case wire.Match(k, "client"):
			wire.Raw(v, &inv.Client)
		}
		if err != nil {
			return fmt.Errorf("member %q: %w", k, err)
		}
		return nil
	})
}

func (p *params) member(k, v []byte) error {
	var err error
	switch {
	case wire.Match(k, "name"):
		err = wire.String(v, &p.Name)
	case wire.Match(k, "arguments"):
		wire.Raw(v, &p.Arguments)
	case wire.Match(k, "uri"):
		err = wire.String(v, &p.URI)
	case wire.Match(k, "ref"):
		wire.Raw(v, &p.Ref)
	case wire.Match(k, "argument"):
		wire.Raw(v, &p.Argument)
	case wire.Match(k, "context"):
		wire.Raw(v, &p.Context)
	}
	if err != nil {
		return fmt.Errorf("params member %q: %w", k, err)
	}
	return nil
}
