package spectest

import (
	"slices"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestBundlesTogetherServeTheCatalogue loads the four first-party bundles
// as Kadu does and checks that, together, they offer every tool of
// docs/reference/bundles.md#tool-catalogue exactly once, with no name, URI or template declared twice (the
// host would refuse the second bundle), and that each declares exactly the
// routes the route table grants it.
func TestBundlesTogetherServeTheCatalogue(t *testing.T) {
	var ms []*kadutest.Manifest
	var tools []string
	for _, name := range []string{"tasks", "executions", "files", "webhooks"} {
		b := kadutest.Wasm(t, kadutest.BuildWasm(t, "../../"+name), &kadutest.Host{})
		m := b.Manifest()
		if m.Name != name {
			t.Errorf("bundle in plugins/%s is named %q", name, m.Name)
		}
		if got, want := slices.Sorted(slices.Values(m.Routes)), slices.Sorted(slices.Values(routeclass.Grants(name))); !slices.Equal(got, want) {
			t.Errorf("bundle %s declares routes %q; the route table (core/api/routeclass) grants it %q", name, got, want)
		}
		ms = append(ms, m)
		tools = append(tools, m.ToolNames()...)
	}
	if err := kadutest.CheckUnique(ms...); err != nil {
		t.Error(err)
	}
	var want []string
	for _, r := range Catalogue {
		want = append(want, r.Tool)
	}
	if !slices.Equal(tools, want) {
		t.Errorf("tools = %v\nwant %v", tools, want)
	}
}
