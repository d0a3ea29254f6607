package plugin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

// fixedAPI answers every api() call at once with the same small body.
type fixedAPI struct{}

func (fixedAPI) Dispatch(context.Context, *auth.Principal, string, string, []byte) (int, []byte) {
	return 200, []byte(`{"data":[],"meta":{"next_cursor":null,"limit":1}}`)
}

// BenchmarkWarmCall measures a call on a pooled instance that makes one
// api() round trip to a dispatcher that answers at once.
//
//   - raw/entry: the guest entry alone (deadline, host functions, the api
//     round trip) on the bench guest, which has no JSON library: what the
//     host costs per call.
//   - raw/catalog: the whole CallTool path on the same guest: argument
//     validation, invocation JSON, pool, entry, result decoding.
//   - go-json/catalog: the same path on the echo guest, a Go guest that
//     decodes its input and encodes its output with encoding/json, as an
//     SDK-built bundle does.
func BenchmarkWarmCall(b *testing.B) {
	e := newEnv(b, func(o *Options) { o.Dispatcher = fixedAPI{} }, bundle(b, "bench"), bundle(b, "echo"))
	ctx, p := context.Background(), principal("org_a")
	catalog := func(tool, args string) func(b *testing.B) {
		return func(b *testing.B) {
			call := &mcp.ToolCall{Tool: &mcp.Tool{Name: tool}, Arguments: json.RawMessage(args), Client: era2026(), RequestID: "req_bench"}
			if _, err := e.r.CallTool(ctx, p, call); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.r.CallTool(ctx, p, call); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("raw/entry", func(b *testing.B) {
		v := e.r.snap.Load().byName["bench"]
		inst, err := v.pools.get(ctx, "org_a")
		if err != nil {
			b.Fatal(err)
		}
		defer v.pools.put(inst)
		input, _ := json.Marshal(invocationJSON{Op: opToolsCall, Params: json.RawMessage(`{"name":"api","arguments":{}}`)})
		b.ReportAllocs()
		for b.Loop() {
			inv := &invocation{v: v, p: p, reqID: "req_bench", input: input, allow: routeclass.Read}
			out, err := inst.call(ctx, inst.handle, inv)
			if err != nil || out.status != 0 {
				b.Fatal(out.status, err)
			}
		}
	})
	b.Run("raw/catalog", catalog("api", `{}`))
	b.Run("go-json/catalog", catalog("fetch", `{"paths":["/api/v1/tasks?limit=1"]}`))
}

// BenchmarkInstantiate measures creating and closing an instance: what a
// per_call bundle pays on every call, and a per_org bundle on an
// organisation's first call (or after its idle TTL).
func BenchmarkInstantiate(b *testing.B) {
	e := newEnv(b, nil, bundle(b, "echo"))
	benchInstantiate(b, e, e.r.snap.Load().byName["echo"])
}

// benchInstantiate creates and closes instances of v in a loop.
func benchInstantiate(b *testing.B, e *env, v *version) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		inst, err := v.instantiate(ctx, "org_a")
		if err != nil {
			b.Fatal(err)
		}
		inst.close()
	}
}
