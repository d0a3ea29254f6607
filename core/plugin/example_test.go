package plugin_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// The app builds the Registry once, hands it to the MCP engine as its
// Catalog, and reloads it when the configuration changes.
func ExampleNew() {
	ctx := context.Background()
	dispatch := plugin.DispatcherFunc(func(ctx context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte) {
		// In the app: run the /api/v1 handler for method and path in process, as p.
		return 200, []byte(`{"data":[]}`)
	})
	reg, err := plugin.New(ctx, &plugin.Options{
		Bundles: []plugin.BundleConfig{{
			Name:   "tasks",
			Path:   "/var/lib/kadu/bundles/tasks.wasm",
			SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Routes: []string{"GET /api/v1/tasks", "GET /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run"},
			Limits: plugin.Limits{Limits: bundleconf.Limits{Timeout: 5 * time.Second}},
			Config: map[string]string{"page_size": "20"},
			// Required: New fails unless it loads. An optional bundle that
			// does not load is skipped, and Status lists it as failed.
			Required: true,
		}},
		MemoryBudget: 512 << 20, // every instance's linear memory together
		CacheDir:     "/var/cache/kadu/wazero",
		Dispatcher:   dispatch,
		SealKey:      make([]byte, 32), // shared by every replica
	})
	if err != nil {
		log.Fatal(err) // names the bundle and what to fix, e.g. a sha256 mismatch with both hashes
	}
	defer reg.Close(ctx)
	// engine, _ := mcp.New(mcp.Options{Catalog: reg, …})
	for _, s := range reg.Status() {
		fmt.Println(s.Name, s.Version, s.State)
	}
}

// `kadu plugins validate FILE` checks a bundle before an operator pins it.
func ExampleValidate() {
	m, err := plugin.Validate(context.Background(), "tasks.wasm", []string{"GET /api/v1/tasks/{id}"})
	if err != nil {
		log.Fatal(err) // e.g. manifest: tools[2] (kadu_tasks_run).access: required
	}
	fmt.Println(m.Name, m.Version, len(m.Tools))
}
