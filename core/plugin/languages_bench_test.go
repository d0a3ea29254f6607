package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// languageExample is one language's bundle and the tool the benchmark
// calls on it: one api() round trip, its JSON decoded and a result
// encoded, as a real tool does.
type languageExample struct {
	lang, name, dir, tool, args string
	goBuild                     bool // built with kadutest.BuildWasm rather than build.sh
}

var languageExamples = []languageExample{
	{lang: "go", name: "executions", dir: "../../plugins/executions", tool: "kadu_executions_list", args: `{"limit":5}`, goBuild: true},
	{lang: "c", name: "webhook_health", dir: "../../examples/plugins/c", tool: "webhook_health_report", args: `{}`},
	{lang: "rust", name: "cashflow", dir: "../../examples/plugins/rust", tool: "cashflow_summary", args: `{"days":7}`},
	{lang: "assemblyscript", name: "inbox", dir: "../../examples/plugins/assemblyscript", tool: "inbox_list", args: `{"limit":5}`},
}

// BenchmarkLanguages compares the SDKs on their example bundles, built from
// source with their own toolchains:
//
//   - <lang>/instantiate: create an instance (running _initialize) and
//     close it: what per_call isolation pays on every call;
//
//   - <lang>/warm-call: a tools/call through the registry on a pooled
//     instance, with one api() round trip to a dispatcher that answers
//     at once with an empty page. It reports mem-B/instance, the linear
//     memory of the pooled instance after the loop: what each pooled
//     instance holds.
//
//     go test -run '^$' -bench Languages -benchmem ./core/plugin
func BenchmarkLanguages(b *testing.B) {
	routes := config.Defaults().Plugins.Bundles["executions"].Routes
	for _, ex := range languageExamples {
		var path string
		if ex.goBuild {
			path = kadutest.BuildWasm(b, ex.dir)
		} else {
			path = kadutest.BuildScript(b, ex.dir)
		}
		cfg := BundleConfig{Name: ex.name, Path: path, SHA256: fileSum(b, path), Routes: routes}
		if !ex.goBuild {
			// Granted what the manifest declares, as the example's README
			// tells the operator.
			cfg.Routes = manifestRoutes(b, path)
		}
		e := newEnv(b, func(o *Options) { o.Dispatcher = fixedAPI{} }, cfg)
		v := e.r.snap.Load().byName[ex.name]
		ctx, p := context.Background(), principal("org_a")

		b.Run(ex.lang+"/instantiate", func(b *testing.B) { benchInstantiate(b, e, v) })
		b.Run(ex.lang+"/warm-call", func(b *testing.B) {
			call := &mcp.ToolCall{Tool: &mcp.Tool{Name: ex.tool}, Arguments: json.RawMessage(ex.args), Client: era2026(), RequestID: "req_bench"}
			res, err := e.r.CallTool(ctx, p, call)
			if err != nil || res.IsError {
				b.Fatalf("%s %s: %v %+v", ex.tool, ex.args, err, res)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.r.CallTool(ctx, p, call); err != nil {
					b.Fatal(err)
				}
			}
			inst, err := v.pools.get(ctx, "org_a")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(inst.mod.Memory().Size()), "mem-B/instance")
			v.pools.put(inst)
		})
	}
}

func fileSum(tb testing.TB, path string) string {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// manifestRoutes reads the routes the bundle at path declares.
func manifestRoutes(tb testing.TB, path string) []string {
	tb.Helper()
	b := kadutest.Wasm(tb, path, &kadutest.Host{})
	return b.Manifest().Routes
}
