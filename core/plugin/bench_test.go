package plugin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// fixedAPI answers every api() call at once with the same small body: an
// execution for GET /api/v1/executions/{id}, an empty page otherwise.
type fixedAPI struct{}

func (fixedAPI) Dispatch(_ context.Context, _ *auth.Principal, _, path string, _ []byte) (int, []byte) {
	if id, ok := strings.CutPrefix(path, "/api/v1/executions/"); ok && !strings.Contains(id, "/") {
		return 200, []byte(`{"id":"` + id + `","task_id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","status":"succeeded",` +
			`"input":{"month":"2026-03"},"output":{"summary":"Done."},"failure":null,"created_at":"2026-03-01T12:00:00Z"}`)
	}
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
//     decodes its input and encodes its output with encoding/json.
//   - go-route/catalog: the same path on the goroute guest, built with
//     sdk/go: a route.Tool mirroring GET /api/v1/executions/{id} with an
//     outputSchema, as plugins/executions' kadu_executions_get. It reports
//     mem-B/instance, the pooled instance's linear memory after the loop.
func BenchmarkWarmCall(b *testing.B) {
	goroute := kadutest.BuildWasm(b, "testdata/guests/goroute")
	e := newEnv(b, func(o *Options) { o.Dispatcher = fixedAPI{} }, bundle(b, "bench"), bundle(b, "echo"),
		BundleConfig{Name: "goroute", Path: goroute, SHA256: fileSum(b, goroute), Routes: []string{"GET /api/v1/executions/{id}"}})
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
	b.Run("go-route/catalog", func(b *testing.B) {
		catalog("goroute_executions_get", `{"id":"exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}`)(b)
		v := e.r.snap.Load().byName["goroute"]
		inst, err := v.pools.get(ctx, "org_a")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(inst.mod.Memory().Size()), "mem-B/instance")
		v.pools.put(inst)
	})
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
