package kadutest

import (
	"net/http"
	"testing"
)

// TestWasmMemoryStaysBounded calls a tool thousands of times on one
// instance and checks that its linear memory stops growing: the SDK yields
// to the Go scheduler before each export returns, so that the collector's
// background work runs, and sets GOGC low enough that the heap's first
// goal is not 4 MiB of garbage (linear memory never shrinks).
func TestWasmMemoryStaysBounded(t *testing.T) {
	h := &Host{API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"tsk_1","name":"Daily","input_schema":{"type":"object"},"created_at":"2026-03-01T12:00:00Z"}`))
	})}
	b := Wasm(t, BuildWasm(t, "../internal/fixture/wasm"), h)
	inv := Invocation{Op: "tools/call", Params: map[string]any{"name": "fx_task_get", "arguments": map[string]string{"id": "tsk_1"}}}
	size := func() uint32 { return b.eng.(*wasmEngine).mod.Memory().Size() }
	call := func(n int) {
		for range n {
			if out := b.Invoke(t, inv); out.Status != 0 || out.Fault != "" {
				t.Fatal(out)
			}
			h.Reset()
		}
	}
	call(1000)
	warm := size()
	call(3000)
	// A few pages for the runtime's own structures, and the collector
	// settling later on a busy machine (320 KiB seen under -race), are
	// fine; the heap growing with the calls is not (3,000 calls make
	// megabytes of garbage), nor the 4 MiB first heap goal of GOGC 100
	// (about 10 MiB per instance).
	const slack, most = 1 << 20, 8 << 20
	if got := size(); got > warm+slack || got > most {
		t.Errorf("linear memory: %d KiB after 1,000 calls, %d KiB after 4,000; want at most %d KiB more, and at most %d KiB", warm>>10, got>>10, slack>>10, most>>10)
	}
}
