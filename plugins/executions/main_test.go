package main

import (
	"strings"
	"testing"

	"github.com/kobana/kadu/plugins/internal/spectest"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestCatalogue checks the tools against docs/reference/bundles.md#tool-catalogue and the request each
// makes: natively, and as the WebAssembly module Kadu loads.
func TestCatalogue(t *testing.T) {
	spectest.ForEachEngine(t, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		spectest.CheckManifest(t, b.Manifest(), "executions")
		spectest.UntrustedMentioned(t, b.Manifest(), "kadu_executions_list", "kadu_executions_get",
			"kadu_executions_steps_list", "kadu_approvals_get")
		spectest.CheckCalls(t, b, h, "executions")
	})
}

func TestResourcesMirrorTheirRoutes(t *testing.T) {
	const id = "exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
	tests := []struct {
		uri      string
		wantPath string
	}{
		{uri: "kobana://kadu/executions/" + id, wantPath: "/api/v1/executions/" + id},
		{uri: "kobana://kadu/executions/" + id + "/steps", wantPath: "/api/v1/executions/" + id + "/steps"},
	}
	h := &kadutest.Host{API: spectest.FakeAPI()}
	b := kadutest.Native(t, h)
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			h.Reset()
			out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]string{"uri": tt.uri}})
			if reqs := h.Requests(); len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != tt.wantPath {
				t.Errorf("requests = %+v; want GET %s", reqs, tt.wantPath)
			}
			if out.Status != 0 || !strings.Contains(string(out.Output), `"uri":"`+tt.uri+`","mimeType":"application/json","text":"{`) {
				t.Errorf("= %d %s; want the route's JSON as application/json text", out.Status, out.Output)
			}
		})
	}
}
