package kadutest_test

import (
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// BenchmarkWasmToolCall measures one tools/call of a route tool through
// the fixture built as wasm, under wazero, with one API round trip
// answered by an http.ServeMux: the guest's JSON work, the host functions
// and the Go scheduler yield included. A bare call with one host round trip
// measured 0.5–0.7 µs before the SDK was written: the rest is JSON.
func BenchmarkWasmToolCall(b *testing.B) {
	h := &kadutest.Host{API: fakeAPI()}
	bundle := kadutest.Wasm(b, kadutest.BuildWasm(b, "../internal/fixture/wasm"), h)
	inv := kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fx_task_get", "arguments": map[string]string{"id": "tsk_1"}}}
	b.ReportAllocs()
	for b.Loop() {
		if out := bundle.Invoke(b, inv); out.Status != 0 || out.Fault != "" {
			b.Fatal(out)
		}
		h.Reset()
	}
}

// BenchmarkNativeToolCall is BenchmarkWasmToolCall without wasm: the same
// guest code called natively through the fake host.
func BenchmarkNativeToolCall(b *testing.B) {
	h := &kadutest.Host{API: fakeAPI()}
	bundle := kadutest.Native(b, h)
	inv := kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fx_task_get", "arguments": map[string]string{"id": "tsk_1"}}}
	b.ReportAllocs()
	for b.Loop() {
		if out := bundle.Invoke(b, inv); out.Status != 0 || out.Fault != "" {
			b.Fatal(out)
		}
		h.Reset()
	}
}

// BenchmarkWasmTypedTool measures one tools/call of the benchmark's echo
// bundle (examples/bench/echo): a typed Tool[echoIn, string], the way a
// partner writes one, its arguments decoded into a struct by the SDK's
// default path. No API round trip.
func BenchmarkWasmTypedTool(b *testing.B) {
	h := &kadutest.Host{}
	bundle := kadutest.Wasm(b, kadutest.BuildWasm(b, "../../../../examples/bench/echo"), h)
	inv := kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "echo", "arguments": map[string]string{"message": "hello, world"}}}
	b.ReportAllocs()
	for b.Loop() {
		if out := bundle.Invoke(b, inv); out.Status != 0 || out.Fault != "" {
			b.Fatal(out)
		}
		h.Reset()
	}
}
