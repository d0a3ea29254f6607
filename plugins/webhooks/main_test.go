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
		spectest.CheckManifest(t, b.Manifest(), "webhooks")
		spectest.UntrustedMentioned(t, b.Manifest(), "kadu_webhook_deliveries_list", "kadu_webhook_deliveries_get", "kadu_audit_events_list")
		spectest.CheckCalls(t, b, h, "webhooks")
	})
}

func TestSecretAnswersSayTheSecretIsShownOnce(t *testing.T) {
	m := kadutest.Native(t, &kadutest.Host{}).Manifest()
	for _, name := range []string{"kadu_webhooks_create", "kadu_webhooks_rotate_secret"} {
		if d := m.Tool(name).Description; !strings.Contains(d, "shown only this once") {
			t.Errorf("%s: description %q does not say the secret is shown once", name, d)
		}
	}
}
