package mcp

import "encoding/json"

// serverCapabilities2026 are advertised by server/discover.
type serverCapabilities2026 struct {
	Tools       struct{} `json:"tools"`
	Resources   struct{} `json:"resources"`
	Prompts     struct{} `json:"prompts"`
	Completions struct{} `json:"completions"`
}

type discoverResult struct {
	SupportedVersions []string               `json:"supportedVersions"`
	Capabilities      serverCapabilities2026 `json:"capabilities"`
	Instructions      string                 `json:"instructions"`
	decorations
}

// discover answers server/discover. It is never rate-limited per
// organisation: a failed discovery makes clients fall back for good.
func (e *Engine) discover(x *exchange) (decorable, *Error) {
	return &discoverResult{SupportedVersions: SupportedVersions(), Instructions: e.instr}, nil
}

type listChanged struct {
	ListChanged bool `json:"listChanged"`
}

type serverCapabilities2025 struct {
	Tools     listChanged `json:"tools"`
	Resources struct {
		Subscribe   bool `json:"subscribe"`
		ListChanged bool `json:"listChanged"`
	} `json:"resources"`
	Prompts     listChanged `json:"prompts"`
	Completions struct{}    `json:"completions"`
}

type initializeResult struct {
	ProtocolVersion string                 `json:"protocolVersion"`
	Capabilities    serverCapabilities2025 `json:"capabilities"`
	ServerInfo      Implementation         `json:"serverInfo"`
	Instructions    string                 `json:"instructions"`
	decorations
}

// initialize negotiates an era-2025 version from the body (docs/reference/mcp.md#protocol-eras). It is
// lenient: capabilities default to {} and clientInfo is optional.
func (e *Engine) initialize(x *exchange) (decorable, *Error) {
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if err := decodeParams(x, &p); err != nil {
		return nil, err
	}
	var requested string
	if p.ProtocolVersion == nil || json.Unmarshal(p.ProtocolVersion, &requested) != nil {
		return nil, InvalidParams("Invalid params: protocolVersion is required and must be a string")
	}
	version := negotiate(requested)
	x.version = version
	return &initializeResult{ProtocolVersion: version, ServerInfo: e.server, Instructions: e.instr}, nil
}

type emptyResult struct{ decorations }

func (e *Engine) ping(x *exchange) (decorable, *Error) { return &emptyResult{}, nil }
