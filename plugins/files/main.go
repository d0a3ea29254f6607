// Command files is Kadu's files bundle: the tools that register uploads,
// confirm them, read file metadata, hand out download URLs and delete
// files (docs/reference/bundles.md#tool-catalogue, group files), plus the file resource, the
// reconcile_statement prompt and the completion of file ids (docs/reference/mcp.md#resources-prompts-and-completions).
//
// No tool carries a file's bytes (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool): contents travel through the
// presigned URLs the API signs. Each tool mirrors one /api/v1 route through
// the api host function, as the caller. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/plugins/files.wasm ./plugins/files
package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// bundle names the bundle and the routes its tools and resources call.
var bundle = kadu.Bundle{
	Name:        "files",
	Version:     "1.0.0",
	Description: "Kadu files: upload input files through presigned URLs, read metadata, download outputs, delete.",
	Routes:      route.Routes(tools...),
}

// A c-shared module never runs main: init is where a bundle registers
// (sdk/go/kadu documents why).
func init() {
	features := append(route.Tools(tools...), resources...)
	kadu.Register(bundle, append(features, reconcilePrompt, completion)...)
}

func main() {}
