// Package mcp is Kadu's MCP protocol engine: stateless Streamable HTTP for
// both protocol eras on one endpoint (docs/reference/mcp.md).
//
// It owns: the order of checks of docs/reference/mcp.md#order-of-checks (one rung per function in
// ladder.go), JSON-RPC message parsing, era classification, the header
// contract of era 2026-07-28 (Mcp-Method, Mcp-Name, Mcp-Param-*, the base64
// sentinel), the method table of each era, result decorations, and the
// access policy (role ∩ scope) applied to every catalog entry.
//
// It must not: know where tools come from (it talks to a Catalog), know the
// REST API, verify tokens itself (an Authenticator does), keep anything
// about a client between requests, or ever open a stream.
package mcp
