package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The audience tests serve the test bundle "partner" (testdata/audienceguest:
// a tool, a resource template, a prompt and completions) to some
// organisations only, and check over HTTP, in both protocol eras, that the
// others cannot tell it exists: every answer they get is the answer for a
// name nobody serves, byte for byte.

// Three organisations on two plans: orgListed is named by the bundle's
// organisations, orgOutside is on the same plan and not named, orgTeam is
// on the plan the bundle's plans list.
const (
	orgListed  = "org_listed"
	orgOutside = "org_outside"
	orgTeam    = "org_team"
)

// audienceEra is one protocol era's way of sending a request.
type audienceEra struct {
	name string
	// wrap turns params into the era's params (era 2026 carries _meta).
	wrap    func(params string) string
	headers func(method, name string) map[string]string
}

var audienceEras = []audienceEra{
	{
		name: "2026-07-28",
		wrap: func(params string) string {
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			params = strings.TrimSuffix(strings.TrimSpace(params), "}")
			if params != "{" {
				params += ","
			}
			return params + meta + "}"
		},
		headers: func(method, name string) map[string]string {
			h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
			if name != "" {
				h["Mcp-Name"] = name
			}
			return h
		},
	},
	{
		name:    "2025-06-18",
		wrap:    func(params string) string { return params },
		headers: func(string, string) map[string]string { return map[string]string{"MCP-Protocol-Version": "2025-06-18"} },
	},
}

// audienceWorld is a server with the partner bundle and a token per
// organisation.
type audienceWorld struct {
	srv    *testServer
	rl     *reloadable
	build  config.Bundle
	tokens map[string]string
}

// startAudienceServer serves the partner bundle alone (the first-party
// bundles are off: what they list is not what is tested), restricted to
// orgListed and the team plan, with orgTeam provisioned on team.
func startAudienceServer(t *testing.T, driver string) *audienceWorld {
	t.Helper()
	path := kadutest.BuildWasm(t, "testdata/audienceguest")
	w := &audienceWorld{rl: &reloadable{}, tokens: map[string]string{}}
	w.build = config.Bundle{Enabled: true, Path: path, SHA256: fileSHA256(t, path),
		Organisations: []string{orgListed}, Plans: []string{"team"}}
	w.srv = serveApp(t, func(c *config.Config) {
		useDriver(t, c, driver)
		for name, b := range c.Plugins.Bundles {
			b.Enabled = false
			c.Plugins.Bundles[name] = b
		}
		c.Plugins.Bundles["partner"] = w.build
		c.Plugins.CacheDir = sharedWasmCache(t)
		c.Plugins.Watch = false
		unlimitedRequests(c)
		w.rl.cfg = *c
		w.rl.cfg.Plugins.Bundles = maps.Clone(c.Plugins.Bundles)
	}, Options{Version: "test", ReloadConfig: w.rl.load})
	if _, _, err := w.srv.app.backend.db.EnsureOrg(context.Background(), orgTeam, "team"); err != nil {
		t.Fatal(err)
	}
	for _, org := range []string{orgListed, orgOutside, orgTeam} {
		token, err := MintDevToken(w.srv.cfg, TokenOptions{OrgID: org, Role: "member"})
		if err != nil {
			t.Fatal(err)
		}
		w.tokens[org] = token
	}
	return w
}

// rpc sends one request as org in era e and returns the status and the
// raw body.
func (w *audienceWorld) rpc(t *testing.T, e audienceEra, org, method, name, params string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + e.wrap(params) + `}`
	req, err := http.NewRequest(http.MethodPost, w.srv.cfg.MCPURL(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+w.tokens[org])
	for k, v := range e.headers(method, name) {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", e.name, method, org, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(raw)
}

// listed returns the values of key of the entries of a list result.
func listed(t *testing.T, raw, list, key string) []string {
	t.Helper()
	var res struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(raw), &res); err != nil || json.Unmarshal(res.Result[list], &entries) != nil {
		t.Fatalf("not a %s result: %s", list, raw)
	}
	var out []string
	for _, e := range entries {
		s, _ := e[key].(string)
		out = append(out, s)
	}
	return out
}

// sees checks, in era e, everything org can learn of the partner bundle:
// want says whether it sees it. Unseen, each answer must equal the answer
// to the same request for a name that does not exist, once the names are
// swapped back.
func (w *audienceWorld) sees(t *testing.T, e audienceEra, org string, want bool) {
	t.Helper()
	check := func(what string, got bool) {
		t.Helper()
		if got != want {
			t.Errorf("era %s, %s: %s = %v, want %v", e.name, org, what, got, want)
		}
	}
	_, raw := w.rpc(t, e, org, "tools/list", "", `{}`)
	check("tools/list has partner_hello", slices.Contains(listed(t, raw, "tools", "name"), "partner_hello"))
	_, raw = w.rpc(t, e, org, "resources/templates/list", "", `{}`)
	check("resources/templates/list has partner://offers/{id}",
		slices.Contains(listed(t, raw, "resourceTemplates", "uriTemplate"), "partner://offers/{id}"))
	_, raw = w.rpc(t, e, org, "prompts/list", "", `{}`)
	check("prompts/list has partner_offer", slices.Contains(listed(t, raw, "prompts", "name"), "partner_offer"))

	// Each request for the partner's entry, and the same for a name nobody
	// serves: (method, name header, params with the entry, with the other).
	probes := []struct {
		method, name, other, params string
		served                      string // in the answer when served
	}{
		{"tools/call", "partner_hello", "nobody_hello", `{"name":"partner_hello","arguments":{}}`, `"org":"` + org + `"`},
		{"resources/read", "partner://offers/42", "nobody://offers/42", `{"uri":"partner://offers/42"}`, "offer 42"},
		{"prompts/get", "partner_offer", "nobody_offer", `{"name":"partner_offer","arguments":{"offer":"gold"}}`, "Present offer gold."},
		{"completion/complete", "", "", `{"ref":{"type":"ref/prompt","name":"partner_offer"},"argument":{"name":"offer","value":"g"}}`, `"gold"`},
		{"completion/complete", "", "", `{"ref":{"type":"ref/resource","uri":"partner://offers/{id}"},"argument":{"name":"id","value":"s"}}`, `"silver"`},
	}
	for _, p := range probes {
		status, raw := w.rpc(t, e, org, p.method, p.name, p.params)
		check(p.method+" "+p.params+" is served", strings.Contains(raw, p.served))
		if want {
			continue
		}
		other := p.params
		if p.method == "completion/complete" {
			other = strings.NewReplacer("partner_offer", "nobody_offer", "partner://", "nobody://").Replace(p.params)
		} else {
			other = strings.ReplaceAll(p.params, p.name, p.other)
		}
		oStatus, oRaw := w.rpc(t, e, org, p.method, p.other, other)
		oRaw = strings.NewReplacer("nobody_hello", "partner_hello", "nobody_offer", "partner_offer", "nobody://", "partner://").Replace(oRaw)
		if status != oStatus || raw != oRaw {
			t.Errorf("era %s, %s: %s %s answers\n%d %s\nbut a name nobody serves gets\n%d %s",
				e.name, org, p.method, p.params, status, raw, oStatus, oRaw)
		}
	}
}

// TestBundleAudienceOverHTTP: a bundle restricted to one organisation and
// one plan is seen by exactly those, in both eras; a reload that changes
// the audience takes effect at once, without a restart, and
// GET /admin/plugins shows it. The plan comes from the store: SQLite and
// PostgreSQL.
func TestBundleAudienceOverHTTP(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) { testBundleAudience(t, startAudienceServer(t, driver)) })
	}
}

func testBundleAudience(t *testing.T, w *audienceWorld) {
	want := map[string]bool{orgListed: true, orgOutside: false, orgTeam: true}
	for _, e := range audienceEras {
		for _, org := range []string{orgListed, orgOutside, orgTeam} {
			w.sees(t, e, org, want[org])
		}
	}
	_, body := adminDo(t, w.srv, http.MethodGet, "/admin/plugins")
	st := partnerStatus(t, body)
	if !slices.Equal(st.Organisations, []string{orgListed}) || !slices.Equal(st.Plans, []string{"team"}) {
		t.Errorf("GET /admin/plugins: partner organisations %v, plans %v; want [%s], [team]", st.Organisations, st.Plans, orgListed)
	}

	// The operator moves the bundle to orgOutside alone.
	b := w.build
	b.Organisations, b.Plans = []string{orgOutside}, nil
	w.rl.setBundle("partner", b)
	if status, body := adminDo(t, w.srv, http.MethodPost, "/admin/plugins/reload"); status != http.StatusOK {
		t.Fatalf("reload: %d %+v", status, body)
	}
	want = map[string]bool{orgListed: false, orgOutside: true, orgTeam: false}
	for _, e := range audienceEras {
		for _, org := range []string{orgListed, orgOutside, orgTeam} {
			w.sees(t, e, org, want[org])
		}
	}
	_, body = adminDo(t, w.srv, http.MethodGet, "/admin/plugins")
	st = partnerStatus(t, body)
	if !slices.Equal(st.Organisations, []string{orgOutside}) || st.Plans != nil {
		t.Errorf("GET /admin/plugins after the reload: partner organisations %v, plans %v; want [%s], null", st.Organisations, st.Plans, orgOutside)
	}
	if st.LoadedAt == nil || st.State != "loaded" {
		t.Errorf("partner after an audience change: %+v, want it loaded", st)
	}
}

func partnerStatus(t *testing.T, body adminBody) (st struct {
	Organisations, Plans []string
	State                string
	LoadedAt             any
}) {
	t.Helper()
	for _, s := range body.Bundles {
		if s.Name == "partner" {
			st.Organisations, st.Plans, st.State = s.Organisations, s.Plans, s.State
			if s.LoadedAt != nil {
				st.LoadedAt = *s.LoadedAt
			}
			return st
		}
	}
	t.Fatalf("GET /admin/plugins does not list partner: %+v", body)
	return st
}

// setBundle makes b the bundle name of the next reload.
func (r *reloadable) setBundle(name string, b config.Bundle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfg.Plugins.Bundles = maps.Clone(r.cfg.Plugins.Bundles)
	r.cfg.Plugins.Bundles[name] = b
}

// BenchmarkToolsListAudienceHTTP measures the whole POST path of an
// era-2026 tools/list, as BenchmarkToolsList, with the partner bundle
// served to everyone and restricted by organisation and plan (the plan
// read through the server's plan resolver and its cache), for an
// organisation listed, one on the plan and one outside.
//
//	go test -run '^$' -bench ToolsListAudienceHTTP -benchmem ./core/app
func BenchmarkToolsListAudienceHTTP(b *testing.B) {
	path := kadutest.BuildWasm(b, "testdata/audienceguest")
	sum := fileSHA256(b, path)
	restricted := config.Bundle{Enabled: true, Path: path, SHA256: sum, Organisations: []string{orgListed}, Plans: []string{"team"}}
	cases := []struct {
		name   string
		bundle config.Bundle
		org    string
	}{
		{"none", config.Bundle{Enabled: true, Path: path, SHA256: sum}, orgOutside},
		{"restricted/listed", restricted, orgListed},
		{"restricted/by_plan", restricted, orgTeam},
		{"restricted/outside", restricted, orgOutside},
	}
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg := config.Defaults()
			cfg.DataDir = b.TempDir()
			for name, bb := range cfg.Plugins.Bundles {
				bb.Enabled = false
				cfg.Plugins.Bundles[name] = bb
			}
			cfg.Plugins.Bundles["partner"] = c.bundle
			cfg.Plugins.CacheDir = sharedWasmCache(b)
			for name, p := range cfg.Plans { // what is measured is not the rate limit
				p.RequestsPerMinute = 1 << 30
				cfg.Plans[name] = p
			}
			a, err := New(context.Background(), &cfg, Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			// Provisioned, as an organisation is after its first call: the
			// plan is then read from the resolver's cache.
			for org, plan := range map[string]string{orgTeam: "team", orgListed: "developer", orgOutside: "developer"} {
				if _, _, err := a.backend.db.EnsureOrg(context.Background(), org, plan); err != nil {
					b.Fatal(err)
				}
			}
			token, err := MintDevToken(&cfg, TokenOptions{OrgID: c.org, Scopes: []string{"kadu.read"}})
			if err != nil {
				b.Fatal(err)
			}
			h := a.Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodPost, cfg.MCPURL(), strings.NewReader(body))
					r.Header.Set("Authorization", "Bearer "+token)
					r.Header.Set("Content-Type", "application/json")
					r.Header.Set("Accept", "application/json, text/event-stream")
					r.Header.Set("MCP-Protocol-Version", "2026-07-28")
					r.Header.Set("Mcp-Method", "tools/list")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}
