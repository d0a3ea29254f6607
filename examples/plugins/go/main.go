// Command failures is a Kadu bundle written as a partner writes one: its
// own module, which needs only github.com/kobana/kadu/sdk/go. One tool,
// failures_digest, tells a person which tasks have been failing lately and
// how: the newest failed executions, grouped by task, with how often each
// failed and its newest failure.
//
// Build it (from this directory, or a copy of it anywhere):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o failures.wasm .
package main

import "github.com/kobana/kadu/sdk/go/kadu"

// A c-shared module never runs main: init is where a bundle registers
// (the kadu package documents why).
func init() {
	kadu.Register(kadu.Bundle{
		Name:        "failures",
		Version:     "1.0.0",
		Description: "Which tasks have been failing lately, and how.",
		Routes:      []string{"GET /api/v1/executions"},
	}, digest)
}

func main() {}
