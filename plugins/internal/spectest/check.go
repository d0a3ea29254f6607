package spectest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// CheckManifest checks that m offers exactly the tools of group, each with
// the hints, access, route and argument conventions of docs/reference/mcp.md#tools, docs/reference/rest.md.
func CheckManifest(t *testing.T, m *kadutest.Manifest, group string) {
	t.Helper()
	rows := Group(group)
	var want []string
	for _, r := range rows {
		want = append(want, r.Tool)
	}
	if got := m.ToolNames(); !slices.Equal(got, want) {
		t.Errorf("tools = %v; want %v", got, want)
	}
	for _, r := range rows {
		tool := m.Tool(r.Tool)
		if tool == nil {
			continue
		}
		t.Run(r.Tool+"/manifest", func(t *testing.T) {
			a := tool.Annotations
			if a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("annotations = %+v; want all four hints as booleans", a)
			}
			if *a.ReadOnlyHint != r.R || *a.DestructiveHint != r.D || *a.IdempotentHint != r.I || *a.OpenWorldHint {
				t.Errorf("hints R=%v D=%v I=%v openWorld=%v; want R=%v D=%v I=%v openWorld=false",
					*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint, r.R, r.D, r.I)
			}
			if tool.Access == nil || tool.Access.MinRole != r.MinRole || tool.Access.Scope != r.Scope {
				t.Errorf("access = %+v; want %s/%s", tool.Access, r.MinRole, r.Scope)
			}
			if !slices.Contains(m.Routes, r.Route()) {
				t.Errorf("routes %v lack %s", m.Routes, r.Route())
			}
			if tool.Title == "" || len(tool.Description) < 80 {
				t.Errorf("title %q, description %q; want both, the description written for a model", tool.Title, tool.Description)
			}
			var in struct {
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
				t.Fatal(err)
			}
			if in.AdditionalProperties == nil || *in.AdditionalProperties {
				t.Errorf("inputSchema allows other properties; want additionalProperties false")
			}
			if _, ok := in.Properties["id"]; ok != r.HasID() || (r.HasID() && !slices.Contains(in.Required, "id")) {
				t.Errorf("inputSchema id property %v (required %v); want it exactly when the route has {id}", ok, in.Required)
			}
			if _, ok := in.Properties["idempotency_key"]; ok != (r.Method != http.MethodGet) {
				t.Errorf("inputSchema idempotency_key %v; want it exactly on writes", ok)
			}
			switch {
			case r.D && len(tool.OutputSchema) > 0:
				t.Errorf("destructive tool declares an outputSchema")
			case r.Method == http.MethodGet && len(tool.OutputSchema) == 0:
				t.Errorf("read tool declares no outputSchema")
			}
		})
	}
}

// UntrustedMentioned checks that the descriptions of tools returning
// untrusted data (docs/reference/rest.md#conventions) say so.
func UntrustedMentioned(t *testing.T, m *kadutest.Manifest, tools ...string) {
	t.Helper()
	for _, name := range tools {
		tool := m.Tool(name)
		if tool == nil || !strings.Contains(tool.Description, "untrusted") {
			t.Errorf("%s: description does not warn that part of the answer is untrusted data", name)
		}
	}
}

// FakeAPI answers every route of the catalogue with its sample, and a
// route called with id "<prefix>missing…" with the API's 404.
func FakeAPI() http.Handler {
	mux := http.NewServeMux()
	for route, s := range Samples {
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if id := r.PathValue("id"); strings.HasSuffix(id, "ffffffffffffffffffffffffffffffff") {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"status":404,"errors":[{"code":"not_found","title":"Not found","detail":"` + id +
					` was not found in your organisation.","param":null,"hint":"Check the id; list the resources to find valid ids."}],"request_id":"req_404"}` + "\n"))
				return
			}
			w.WriteHeader(s.Status)
			_, _ = w.Write([]byte(s.Body + "\n"))
		})
	}
	return mux
}

// CheckCalls calls every tool of group and checks the one request each
// makes (method, path with query, body) and that the answer comes back as
// the route's JSON — valid against the tool's outputSchema, as the host
// requires — and that an API 404 comes back as an isError result carrying
// the API's error.
func CheckCalls(t *testing.T, b *kadutest.Bundle, h *kadutest.Host, group string) {
	t.Helper()
	for _, r := range Group(group) {
		t.Run(r.Tool+"/call", func(t *testing.T) {
			args := map[string]any{}
			for k, v := range r.Args {
				args[k] = v
			}
			path := "/api/v1" + r.Path
			if r.HasID() {
				args["id"] = r.SampleID()
				path = strings.Replace(path, "{id}", r.SampleID(), 1)
			}
			if r.Query != "" {
				path += "?" + r.Query
			}
			h.Reset()
			res := b.CallTool(t, r.Tool, args)
			reqs := h.Requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %+v; want exactly one", reqs)
			}
			if got := reqs[0]; got.Method != r.Method || got.Path != path || string(got.Body) != r.Body {
				t.Errorf("request = %s %s %s\nwant      %s %s %s", got.Method, got.Path, got.Body, r.Method, path, r.Body)
			}
			if res.IsError || res.Text() != Samples[r.Route()].Body {
				t.Errorf("result (isError %v) = %s\nwant the route's JSON %s", res.IsError, res.Text(), Samples[r.Route()].Body)
			}
			if !r.HasID() {
				return
			}
			missing := strings.TrimSuffix(r.SampleID(), "0193a5c4e1f27c3a9b1d2e4f5a6b7c8d") + "ffffffffffffffffffffffffffffffff"
			args["id"] = missing
			res = b.CallTool(t, r.Tool, args)
			if !res.IsError || !strings.Contains(res.Text(), `"code":"not_found"`) || !strings.Contains(res.Text(), `"hint":`) {
				t.Errorf("404 = %+v; want an isError result with the API's error JSON", res)
			}
		})
	}
}

// ForEachEngine runs f on the bundle of the package under test loaded
// natively and as its WebAssembly module (built from "."), each with a
// host that answers with FakeAPI.
func ForEachEngine(t *testing.T, f func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host)) {
	t.Helper()
	t.Run("native", func(t *testing.T) {
		h := &kadutest.Host{API: FakeAPI()}
		f(t, kadutest.Native(t, h), h)
	})
	t.Run("wasm", func(t *testing.T) {
		path := kadutest.BuildWasm(t, ".")
		h := &kadutest.Host{API: FakeAPI()}
		f(t, kadutest.Wasm(t, path, h), h)
	})
}
