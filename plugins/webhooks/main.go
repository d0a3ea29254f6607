// Command webhooks is Kadu's webhooks bundle, the bundle of admins: the
// tools that manage the organisation's webhooks and inspect and replay
// their deliveries, and the one that reads the audit trail
// (docs/reference/bundles.md#tool-catalogue, group webhooks), plus the
// webhook and audit event resources (docs/reference/mcp.md#resources-prompts-and-completions).
// Every tool is for admins: a webhook sends the organisation's data out of
// Kadu, and the audit trail names everyone of it and what they did.
//
// Each tool mirrors one /api/v1 route through the api host function, as the
// caller. Receivers' response bodies are untrusted data, and the
// descriptions say so. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/plugins/webhooks.wasm ./plugins/webhooks
package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// bundle names the bundle and the routes its tools and resources call.
var bundle = kadu.Bundle{
	Name:        "webhooks",
	Version:     "1.0.0",
	Description: "Kadu webhooks and audit trail: create, change, rotate and delete webhooks; inspect and replay deliveries; read the audit trail.",
	Routes:      append(route.Routes(tools...), auditEventRoute),
}

// A c-shared module never runs main: init is where a bundle registers
// (sdk/go/kadu documents why).
func init() { kadu.Register(bundle, append(route.Tools(tools...), resources...)...) }

func main() {}
