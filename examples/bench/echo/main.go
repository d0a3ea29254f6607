// Command echo is the benchmark's Kadu bundle: one tool, echo, that returns
// the message it is given, written as a partner would write it with sdk/go
// (a typed Tool, its default path). The peers under peers/ serve the same
// tool natively.
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o echo.wasm ./echo
package main

import "github.com/kobana/kadu/sdk/go/kadu"

type echoIn struct {
	Message string `json:"message"`
}

var echo = kadu.Tool[echoIn, string]{
	Name:        "echo",
	Description: "Returns the message it is given.",
	InputSchema: kadu.ObjectSchema(kadu.Property{Name: "message", Schema: `{"type":"string"}`, Required: true}),
	Annotations: &kadu.Annotations{ReadOnly: true, Idempotent: true},
	Access:      kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
	Handler: func(_ *kadu.Call, in echoIn) (string, error) {
		return in.Message, nil
	},
}

// A c-shared module never runs main: a bundle registers from init.
func init() {
	kadu.Register(kadu.Bundle{
		Name:        "echo",
		Version:     "1.0.0",
		Description: "Benchmark fixture: one echo tool (examples/bench).",
		Routes:      []string{},
	}, echo)
}

func main() {}
