package plugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/kobana/kadu/core/mcp"
)

// partnerBundle is the echo guest served as bundle "partner" (its tools,
// prompt and URIs prefixed or named so), for audience.
func partnerBundle(t testing.TB, aud Audience) BundleConfig {
	t.Helper()
	cfg := bundle(t, "echo")
	cfg.Name = "partner"
	cfg.Config = map[string]string{"bundle_name": "partner", "tool_prefix": "p_"}
	cfg.Audience = aud
	return cfg
}

// plansOf is a PlanOf over a fixed table; an organisation not in it is on
// "developer".
func plansOf(m map[string]string) PlanOf {
	return func(_ context.Context, org string) (string, error) {
		if p, ok := m[org]; ok {
			return p, nil
		}
		return "developer", nil
	}
}

// TestAudienceRule: an organisation sees a restricted bundle when it is
// listed or its plan is; unset is everyone, an empty list nobody.
func TestAudienceRule(t *testing.T) {
	tests := []struct {
		name string
		aud  Audience
		org  string
		plan string
		want bool
	}{
		{"unset: everyone", Audience{}, "org_b", "developer", true},
		{"listed", Audience{Organisations: []string{"org_a"}}, "org_a", "developer", true},
		{"not listed", Audience{Organisations: []string{"org_a"}}, "org_b", "developer", false},
		{"plan listed", Audience{Plans: []string{"team"}}, "org_c", "team", true},
		{"plan not listed", Audience{Plans: []string{"team"}}, "org_b", "developer", false},
		{"listed or plan", Audience{Organisations: []string{"org_a"}, Plans: []string{"team"}}, "org_c", "team", true},
		{"empty organisations: nobody", Audience{Organisations: []string{}}, "org_a", "developer", false},
		{"empty plans: nobody", Audience{Plans: []string{}}, "org_a", "developer", false},
		{"no organisation", Audience{Organisations: []string{""}}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSnapshot()
			v := &version{cfg: BundleConfig{Name: "partner"}}
			s.byName["partner"] = v
			s.setAudiences([]BundleConfig{{Name: "partner", Audience: tt.aud}})
			if got := s.sees(v, viewer{org: tt.org, plan: tt.plan}); got != tt.want {
				t.Errorf("sees(%s on %s) = %v, want %v", tt.org, tt.plan, got, tt.want)
			}
		})
	}
}

// TestAudienceHidesEverything: for an organisation outside the audience,
// the partner bundle's tools, resources, templates, prompts and
// completions answer exactly as names nobody serves; a reload that changes
// only the audience keeps the loaded version and takes effect at once.
func TestAudienceHidesEverything(t *testing.T) {
	aud := Audience{Organisations: []string{"org_a"}, Plans: []string{"team"}}
	e := newEnv(t, func(o *Options) { o.PlanOf = plansOf(map[string]string{"org_c": "team"}) },
		bundle(t, "echo"), partnerBundle(t, aud))
	ctx := context.Background()

	seen := func(org string) (tools, prompts, templates []string) {
		t.Helper()
		p := principal(org)
		ts, err := e.r.Tools(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			tools = append(tools, x.Name)
		}
		ps, _ := e.r.Prompts(ctx, p)
		for _, x := range ps {
			prompts = append(prompts, x.Name)
		}
		tt, _ := e.r.ResourceTemplates(ctx, p)
		for _, x := range tt {
			templates = append(templates, x.URITemplate)
		}
		return tools, prompts, templates
	}
	check := func(org string, want bool) {
		t.Helper()
		tools, prompts, templates := seen(org)
		if got := slices.Contains(tools, "p_echo"); got != want {
			t.Errorf("%s: Tools has p_echo = %v, want %v (%v)", org, got, want, tools)
		}
		if !slices.Contains(tools, "echo") {
			t.Errorf("%s: Tools lost the unrestricted bundle: %v", org, tools)
		}
		if got := slices.Contains(prompts, "p_greet"); got != want {
			t.Errorf("%s: Prompts has p_greet = %v, want %v", org, got, want)
		}
		if got := slices.Contains(templates, "test://partner/items/{id}"); got != want {
			t.Errorf("%s: ResourceTemplates has test://partner/items/{id} = %v, want %v", org, got, want)
		}
		p := principal(org)
		_, callErr := e.r.CallTool(ctx, p, &mcp.ToolCall{Tool: &mcp.Tool{Name: "p_echo"}, Arguments: []byte(`{"text":"x"}`), Client: era2026()})
		_, readErr := e.r.ReadResource(ctx, p, &mcp.ReadResourceRequest{URI: "test://partner/items/1", Client: era2026()})
		_, promptErr := e.r.GetPrompt(ctx, p, &mcp.GetPromptRequest{Prompt: &mcp.Prompt{Name: "p_greet"}, Arguments: map[string]string{"who": "Ana"}, Client: era2026()})
		req := &mcp.CompleteRequest{Ref: mcp.CompleteReference{Type: "ref/prompt", Name: "p_greet"}, Client: era2026()}
		req.Argument.Name, req.Argument.Value = "who", "an"
		comp, compErr := e.r.Complete(ctx, p, req)
		if compErr != nil {
			t.Fatalf("%s: Complete: %v", org, compErr)
		}
		if want {
			if callErr != nil || readErr != nil || promptErr != nil || len(comp.Completion.Values) == 0 {
				t.Errorf("%s sees partner, yet: call %v, read %v, prompt %v, completion %v", org, callErr, readErr, promptErr, comp.Completion.Values)
			}
			return
		}
		_, unknownCall := e.r.CallTool(ctx, p, &mcp.ToolCall{Tool: &mcp.Tool{Name: "p_echo"}, Arguments: []byte(`{}`), Client: era2026()})
		if want := mcp.InvalidParams("Unknown tool: %s", "p_echo"); fmt.Sprint(callErr) != fmt.Sprint(want) || fmt.Sprint(unknownCall) != fmt.Sprint(want) {
			t.Errorf("%s: hidden tool call = %v, want %v", org, callErr, want)
		}
		if !errors.Is(readErr, mcp.ErrResourceNotFound) || !errors.Is(promptErr, mcp.ErrPromptNotFound) {
			t.Errorf("%s: hidden read = %v, prompt = %v; want not found", org, readErr, promptErr)
		}
		if len(comp.Completion.Values) != 0 {
			t.Errorf("%s: hidden completion = %v, want none", org, comp.Completion.Values)
		}
	}
	check("org_a", true)  // listed
	check("org_b", false) // developer, not listed
	check("org_c", true)  // on team

	before := e.statusOf(t, "partner")
	if !reflect.DeepEqual(before.Organisations, aud.Organisations) || !reflect.DeepEqual(before.Plans, aud.Plans) {
		t.Errorf("Status = organisations %v, plans %v; want %v", before.Organisations, before.Plans, aud)
	}
	moved := partnerBundle(t, Audience{Organisations: []string{"org_b"}})
	moved.Required = true
	echo := bundle(t, "echo")
	echo.Required = true
	if err := e.r.Reload(ctx, []BundleConfig{echo, moved}); err != nil {
		t.Fatal(err)
	}
	check("org_a", false)
	check("org_b", true)
	check("org_c", false)
	after := e.statusOf(t, "partner")
	if !after.LoadedAt.Equal(*before.LoadedAt) || after.Plans != nil {
		t.Errorf("an audience change reloaded the bundle or kept its plans: before %+v, after %+v", before, after)
	}
}

// BenchmarkToolsListAudience measures Tools, which every tools/list and
// tools/call reads: with no restricted bundle (the snapshot's list as it
// is), and with one restricted by organisation and plan, for an
// organisation that sees it and one that does not (a cached view).
func BenchmarkToolsListAudience(b *testing.B) {
	aud := Audience{Organisations: []string{"org_a"}, Plans: []string{"team"}}
	plans := plansOf(map[string]string{"org_c": "team"})
	cases := []struct {
		name    string
		bundles []BundleConfig
		org     string
	}{
		{"none", []BundleConfig{bundle(b, "echo"), partnerBundle(b, Audience{})}, "org_b"},
		{"restricted/listed", []BundleConfig{bundle(b, "echo"), partnerBundle(b, aud)}, "org_a"},
		{"restricted/by_plan", []BundleConfig{bundle(b, "echo"), partnerBundle(b, aud)}, "org_c"},
		{"restricted/outside", []BundleConfig{bundle(b, "echo"), partnerBundle(b, aud)}, "org_b"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, func(o *Options) { o.PlanOf = plans }, c.bundles...)
			ctx, p := context.Background(), principal(c.org)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.r.Tools(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
