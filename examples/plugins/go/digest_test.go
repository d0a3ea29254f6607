package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// fakeAPI answers GET /api/v1/executions with four failed executions of
// two tasks, newest first, as the Kadu API would.
func fakeAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/executions", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("status") != "failed" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"status":422,"errors":[{"code":"invalid","title":"Invalid"}],"request_id":"req_1"}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[
			{"id":"exe_4","task_id":"tsk_b","status":"failed","finished_at":"2026-11-04T09:00:00Z","failure":{"code":"timeout","message":"step 2 ran out of time"}},
			{"id":"exe_3","task_id":"tsk_a","status":"failed","finished_at":"2026-11-03T09:00:00Z","failure":{"code":"api_error","message":"bank said 503"}},
			{"id":"exe_2","task_id":"tsk_b","status":"failed","finished_at":"2026-11-02T09:00:00Z","failure":{"code":"timeout","message":"again"}},
			{"id":"exe_1","task_id":"tsk_b","status":"failed","finished_at":null,"failure":null}],
			"meta":{"next_cursor":null,"limit":50}}`))
	})
	return mux
}

// engines runs f on the bundle registered natively (fast, debuggable) and
// on the WebAssembly module the server loads.
func engines(t *testing.T, f func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host)) {
	t.Run("native", func(t *testing.T) {
		h := &kadutest.Host{API: fakeAPI()}
		f(t, kadutest.Native(t, h), h)
	})
	t.Run("wasm", func(t *testing.T) {
		h := &kadutest.Host{API: fakeAPI()}
		f(t, kadutest.Wasm(t, kadutest.BuildWasm(t, "."), h), h)
	})
}

func TestManifest(t *testing.T) {
	engines(t, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		m := b.Manifest()
		tool := m.Tool("failures_digest")
		if m.Name != "failures" || tool == nil || len(m.Tools) != 1 {
			t.Fatalf("manifest %s with tools %v; want failures with failures_digest", m.Name, m.ToolNames())
		}
		if !*tool.Annotations.ReadOnlyHint || *tool.Access != (kadutest.Access{MinRole: "viewer", Scope: "read"}) {
			t.Errorf("failures_digest: annotations %+v, access %+v; want read-only for viewers", tool.Annotations, tool.Access)
		}
	})
}

func TestDigestGroupsByTask(t *testing.T) {
	engines(t, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		r := b.CallTool(t, "failures_digest", map[string]any{})
		if r.IsError {
			t.Fatalf("isError: %s", r.Text())
		}
		var got digestOut
		if err := json.Unmarshal(r.StructuredContent, &got); err != nil {
			t.Fatal(err)
		}
		want := digestOut{Executions: 4, Tasks: []taskFails{
			{TaskID: "tsk_b", Failures: 3, Newest: failure{ExecutionID: "exe_4", Code: "timeout", Message: "step 2 ran out of time", FinishedAt: "2026-11-04T09:00:00Z"}},
			{TaskID: "tsk_a", Failures: 1, Newest: failure{ExecutionID: "exe_3", Code: "api_error", Message: "bank said 503", FinishedAt: "2026-11-03T09:00:00Z"}},
		}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("digest = %+v\nwant %+v", got, want)
		}
		if reqs := h.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/v1/executions?limit=50&status=failed" {
			t.Errorf("requests = %+v; want one GET of the 50 newest failed executions", reqs)
		}
	})
}

func TestDigestLimitAndRefusals(t *testing.T) {
	engines(t, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		b.CallTool(t, "failures_digest", map[string]any{"limit": 5})
		if reqs := h.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Path, "limit=5") {
			t.Errorf("requests = %+v; want limit=5", reqs)
		}
		// A limit that is no number is refused, never read as the default.
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{
			"name": "failures_digest", "arguments": map[string]any{"limit": "many"}}})
		if out.Status == 0 && !strings.Contains(string(out.Output), `"isError":true`) {
			t.Errorf("limit \"many\" = %d %s; want a refusal", out.Status, out.Output)
		}
	})
}
