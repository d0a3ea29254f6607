// Package kadu is the Go SDK for Kadu bundles: WebAssembly modules that give
// a Kadu MCP server its tools, resources, prompts and completions, under the
// ABI "kadu/v1" (sdk/ABI.md).
//
// It owns: the guest side of kadu v1 — the exports kadu_abi_v1,
// kadu_describe and kadu_handle, reading input and writing output, the
// manifest built from what a bundle registers, dispatch of an invocation to
// the right handler, and the mapping of a handler's answer (a value, a
// ToolError, an *APIError, InputRequired, an *RPCError, a panic) onto the
// ABI's results and statuses.
//
// It must not: hold a token or a secret (there is none in a guest), reach
// anything but the Kadu API (Call.API is the only way out), or keep a
// caller's data between invocations (an instance serves other users of the
// same organisation next).
//
// # A bundle
//
// A bundle is a main package built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hello.wasm ./hello
//
// In a c-shared module main.main is never run: the runtime runs package
// initialisation (variable initialisers and func init) inside _initialize,
// and then only the exports. So a bundle registers itself from init — the
// only hook a guest has (Kadu's own rule of "no init()" is for the core,
// which has main):
//
//	func init() {
//		kadu.Register(kadu.Bundle{
//			Name:    "hello",
//			Version: "1.0.0",
//			Routes:  []string{"GET /api/v1/usage"},
//		}, greet)
//	}
//
//	var greet = kadu.Tool[greetIn, greetOut]{
//		Name:        "hello_greet",
//		Description: "Greets the caller's organisation.",
//		InputSchema: kadu.ObjectSchema(kadu.Property{Name: "name", Schema: `{"type":"string"}`, Required: true}),
//		Annotations: &kadu.Annotations{ReadOnly: true, Idempotent: true},
//		Access:      kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
//		Handler: func(c *kadu.Call, in greetIn) (greetOut, error) {
//			return greetOut{Text: "Hello, " + in.Name + " of " + c.Caller().OrgID}, nil
//		},
//	}
//
//	func main() {} // required by the go tool; never run
//
// A tool's arguments decode into In as encoding/json would decode them.
// When In is a struct of plain fields (strings, booleans, numbers,
// json.RawMessage, []string, pointers to those; json tags as encoding/json
// reads them), Register builds a decoder for it once and calls decode
// without reflection, which is several times cheaper in wasm; any other In
// (maps, interfaces, nested or embedded structs, ",string", a type with
// its own UnmarshalJSON or UnmarshalText) goes through encoding/json.
//
// Register panics on a definition the host would refuse (a bad name, a
// schema that is not an object, a destructive tool with an output schema,
// …): in wasm the panic traps _initialize and the host refuses the bundle
// with the message in its log; natively it fails the test binary at start.
//
// # Answers
//
// A tool handler returns its output or an error. The output becomes a text
// content block holding its JSON (a string is sent as it is; a
// json.RawMessage as its bytes) and, when the tool declares an
// OutputSchema, also structuredContent. A *Result is sent as it is. Errors:
//
//   - ToolError("…"): an isError result the model reads and can act on.
//   - *APIError (from Response.Err or Call.Do): a 4xx is an isError result
//     whose text is the API's error body, which carries a hint for the
//     model; a 5xx is an isError result asking to try again.
//   - InputRequired(requests, state): the client is asked for input
//     (elicitation, sampling, roots) and the call is retried with the
//     answers and state (Call.InputResponse, Call.State).
//   - *RPCError: a JSON-RPC error (status 1), for requests that cannot be
//     served at all.
//   - any other error: an isError result with its text.
//
// A panic in a handler is a bug: the SDK logs it with its stack and returns
// status 2, a fault, so the host discards the instance and the client gets
// an internal error.
//
// # Concurrency
//
// A guest instance runs one invocation at a time, so handlers need no
// locking. A *Call is valid only during the handler it was given to.
//
// Natively (go test on linux/amd64), the package compiles with a stand-in
// host: Config reports every key absent, Log writes to stderr, and anything
// else panics. Package kadutest installs a fake host for tests.
package kadu
