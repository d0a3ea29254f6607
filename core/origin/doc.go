// Package origin is the DNS-rebinding and cross-origin guard of the public
// listener (docs/security.md): which Host and Origin a request may carry.
//
// It owns the rules only. core/app puts a Policy in front of every public
// route (MCP endpoint, REST API, embedded authorization server, approval
// page, blob URLs, metadata documents); core/mcp and core/confirm/page ask
// the same Policy again at their own rung, so that each stays guarded when
// served on its own (tests, embedders).
//
// It must not: render answers (each route refuses in its own wire format),
// know routes, or trust anything but the request's own headers.
package origin
