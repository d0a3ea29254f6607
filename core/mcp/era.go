package mcp

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Era is a family of protocol revisions that share a lifecycle.
type Era int

const (
	// Era2025 revisions shake hands with initialize (2025-06-18, 2025-03-26).
	Era2025 Era = iota + 1
	// Era2026 is 2026-07-28: stateless, each request carries its envelope.
	Era2026
)

func (e Era) String() string {
	switch e {
	case Era2025:
		return "2025"
	case Era2026:
		return "2026-07-28"
	}
	return "unknown"
}

// Protocol revisions Kadu speaks.
const (
	Version20260728 = "2026-07-28"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
)

// SupportedVersions lists the revisions Kadu speaks, newest first.
func SupportedVersions() []string {
	return []string{Version20260728, Version20250618, Version20250326}
}

// Keys of the era-2026 request envelope in params._meta.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

func badEnvelope(format string, args ...any) *Error {
	e := InvalidParams(format, args...)
	e.Status = http.StatusBadRequest
	return e
}

func isVersion2025(v string) bool { return v == Version20250618 || v == Version20250326 }

// classifyEra applies rung 7 of docs/reference/mcp.md#order-of-checks. It returns the client context of
// the request (era, version in use, and in era 2026 the declared
// capabilities and client info) or the error that answers it.
func classifyEra(h http.Header, m *message) (ClientContext, *Error) {
	header, hasHeader := h.Get(HeaderProtocolVersion), len(h.Values(HeaderProtocolVersion)) > 0
	if env := m.metaValue(MetaProtocolVersion); env != nil {
		var version string
		if !isString(env) || json.Unmarshal(env, &version) != nil {
			return ClientContext{}, badEnvelope("Invalid params: params._meta[%q] must be a string", MetaProtocolVersion)
		}
		c := ClientContext{ProtocolVersion: version, Era: Era2026}
		caps := m.metaValue(MetaClientCapabilities)
		if caps == nil || caps[0] != '{' || json.Unmarshal(caps, &c.Capabilities) != nil {
			return ClientContext{}, badEnvelope("Invalid params: params._meta[%q] must be an object ({} is fine)", MetaClientCapabilities)
		}
		if e := checkHeaderContract(h, m, version); e != nil {
			return ClientContext{}, e
		}
		if version != Version20260728 {
			return ClientContext{}, unsupportedVersion(version)
		}
		if info := m.metaValue(MetaClientInfo); info != nil {
			var ci Implementation
			if json.Unmarshal(info, &ci) == nil && ci.Name != "" {
				c.Info = &ci
			}
		}
		return c, nil
	}
	if header == Version20260728 {
		return ClientContext{}, badEnvelope("Invalid params: MCP-Protocol-Version 2026-07-28 requires params._meta[%q] and params._meta[%q]; Kadu never falls back to the 2025 era silently", MetaProtocolVersion, MetaClientCapabilities)
	}
	if m.method == "initialize" {
		return ClientContext{Era: Era2025}, nil // version negotiated from the body
	}
	if hasHeader && !isVersion2025(header) {
		return ClientContext{}, unsupportedVersion(header)
	}
	if !hasHeader {
		header = Version20250326
	}
	return ClientContext{ProtocolVersion: header, Era: Era2025}, nil
}

// negotiate picks the era-2025 version answered to an initialize asking for
// requested: the same when Kadu speaks it in that era, else 2025-06-18.
func negotiate(requested string) string {
	if slices.Contains([]string{Version20250618, Version20250326}, requested) {
		return requested
	}
	return Version20250618
}
