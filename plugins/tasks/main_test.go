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
		spectest.CheckManifest(t, b.Manifest(), "tasks")
		spectest.CheckCalls(t, b, h, "tasks")
	})
}

func TestResourcesMirrorTheirRoutes(t *testing.T) {
	tests := []struct {
		uri      string
		wantPath string
		wantErr  string // the status-1 output; "" for success
	}{
		{uri: "kobana://kadu/tasks/tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d", wantPath: "/api/v1/tasks/tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"},
		{uri: "kobana://kadu/usage", wantPath: "/api/v1/usage"},
		{uri: "kobana://kadu/tasks/tsk_ffffffffffffffffffffffffffffffff", wantPath: "/api/v1/tasks/tsk_ffffffffffffffffffffffffffffffff",
			wantErr: `{"code":-32602,"message":"Resource not found","data":{"uri":"kobana://kadu/tasks/tsk_ffffffffffffffffffffffffffffffff"}}`},
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
			switch {
			case tt.wantErr != "":
				if out.Status != 1 || string(out.Output) != tt.wantErr {
					t.Errorf("= %d %s; want 1 %s", out.Status, out.Output, tt.wantErr)
				}
			case out.Status != 0 || !strings.Contains(string(out.Output), `"mimeType":"application/json","text":"{`):
				t.Errorf("= %d %s; want the route's JSON as application/json text", out.Status, out.Output)
			}
		})
	}
}
