package main

import (
	"testing"

	"github.com/kobana/kadu/plugins/internal/spectest"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestCatalogue checks the tools against docs/reference/bundles.md#tool-catalogue and the request each
// makes: natively, and as the WebAssembly module Kadu loads.
func TestCatalogue(t *testing.T) {
	spectest.ForEachEngine(t, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		spectest.CheckManifest(t, b.Manifest(), "files")
		spectest.UntrustedMentioned(t, b.Manifest(), "kadu_files_get", "kadu_files_list", "kadu_files_download")
		spectest.CheckCalls(t, b, h, "files")
	})
}

func TestFileResourceIsMetadata(t *testing.T) {
	const id = "file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
	h := &kadutest.Host{API: spectest.FakeAPI()}
	b := kadutest.Native(t, h)
	out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]string{"uri": "kobana://kadu/files/" + id}})
	if reqs := h.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/v1/files/"+id {
		t.Errorf("requests = %+v; want GET /api/v1/files/%s (metadata, not /download)", reqs, id)
	}
	if out.Status != 0 {
		t.Errorf("= %d %s", out.Status, out.Output)
	}
}
