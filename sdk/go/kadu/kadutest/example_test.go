package kadutest_test

import (
	"net/http"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// A bundle's test: the fake API is an http.ServeMux with the routes the
// tool calls; the same checks run on the native build and on the wasm
// module Kadu loads.
func Example() {
	_ = func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"id":"` + r.PathValue("id") + `"}`))
		})
		for _, b := range []*kadutest.Bundle{
			kadutest.Native(t, &kadutest.Host{API: mux}),
			kadutest.Wasm(t, kadutest.BuildWasm(t, "."), &kadutest.Host{API: mux}),
		} {
			res := b.CallTool(t, "acme_tasks_get", map[string]any{"id": "tsk_1"})
			if res.IsError || res.Text() != `{"id":"tsk_1"}` {
				t.Errorf("acme_tasks_get = %+v", res)
			}
		}
	}
}
