package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateBundleAudience: who sees a bundle is checked at load and at
// every reload; a mistake names the key and the entry.
func TestValidateBundleAudience(t *testing.T) {
	tests := []struct {
		name          string
		orgs, plans   []string
		wantKey, want string // "" = valid
	}{
		{name: "unset: everyone"},
		{name: "organisations", orgs: []string{"acme-1", "org_dev"}},
		{name: "plans", plans: []string{"team"}},
		{name: "both", orgs: []string{"acme-1"}, plans: []string{"developer", "team"}},
		{name: "empty lists: nobody", orgs: []string{}, plans: []string{}},
		{name: "unknown plan", plans: []string{"team", "gold"}, wantKey: "plugins.bundles.partner.plans",
			want: `entry 1, "gold", is not a configured plan (want one of developer, team)`},
		{name: "plan twice", plans: []string{"team", "team"}, wantKey: "plugins.bundles.partner.plans", want: "listed twice"},
		{name: "bad organisation id", orgs: []string{"acme/1"}, wantKey: "plugins.bundles.partner.organisations", want: `entry 0, "acme/1"`},
		{name: "organisation twice", orgs: []string{"acme", "acme"}, wantKey: "plugins.bundles.partner.organisations", want: "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validBase()
			b := goodBundle()
			b.Organisations, b.Plans = tt.orgs, tt.plans
			c.Plugins.Bundles["partner"] = b
			err := c.Validate()
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			got := keyErrors(t, err)
			if len(got) != 1 || got[0].Key != tt.wantKey || !strings.Contains(got[0].Msg, tt.want) {
				t.Fatalf("Validate() = %v, want one error at %s: …%s…", err, tt.wantKey, tt.want)
			}
		})
	}
}

// TestBundleAudienceUnsetVersusEmpty: in a file, a missing key is every
// organisation and an empty list is nobody, and Restricted tells them
// apart.
func TestBundleAudienceUnsetVersusEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kadu.yaml")
	yaml := `plugins:
  bundles:
    open:
      enabled: true
      path: /opt/open.wasm
      sha256: ` + strings.Repeat("ab", 32) + `
    closed:
      enabled: true
      path: /opt/closed.wasm
      sha256: ` + strings.Repeat("cd", 32) + `
      organisations: []
    gold:
      enabled: true
      path: /opt/gold.wasm
      sha256: ` + strings.Repeat("ef", 32) + `
      organisations: [acme]
      plans: [team]
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(path, true, nil, func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"open": false, "closed": true, "gold": true} {
		if got := c.Plugins.Bundles[name].Restricted(); got != want {
			t.Errorf("bundle %s: Restricted() = %v, want %v (organisations %#v, plans %#v)", name, got, want,
				c.Plugins.Bundles[name].Organisations, c.Plugins.Bundles[name].Plans)
		}
	}
	if g := c.Plugins.Bundles["gold"]; len(g.Organisations) != 1 || len(g.Plans) != 1 {
		t.Errorf("gold = %+v", g)
	}
}
