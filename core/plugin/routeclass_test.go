package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/mcp"
)

// TestRouteClassesPerTool checks that the host, not the bundle, bounds
// what each tool may call: every route below is declared and granted, and
// only the tool's annotations decide.
func TestRouteClassesPerTool(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "echo"))
	routes := []struct {
		method, path string
		class        routeclass.Class
	}{
		{"GET", "/api/v1/tasks?limit=1", routeclass.Read},
		{"PATCH", "/api/v1/tasks/tsk_1", routeclass.Write},
		{"POST", "/api/v1/tasks/tsk_1/run", routeclass.Destructive},
	}
	tools := []struct {
		name  string
		allow routeclass.Class
	}{
		{"fetch", routeclass.Read},
		{"fetch_write", routeclass.Write},
		{"fetch_destructive", routeclass.Destructive},
	}
	for _, tool := range tools {
		for _, rt := range routes {
			t.Run(fmt.Sprintf("%s %s %s", tool.name, rt.method, rt.path), func(t *testing.T) {
				before := len(e.api.recorded())
				got := e.fetchAs(t, tool.name, rt.method, "", rt.path)[0]
				dispatched := len(e.api.recorded()) - before
				if rt.class <= tool.allow {
					if got.Status != 200 || dispatched != 1 {
						t.Fatalf("= %d %s (%d dispatches); want 200 from the API", got.Status, got.Body, dispatched)
					}
					return
				}
				if got.Status != 403 || errorCode(t, got.Body) != "route_not_granted" || dispatched != 0 {
					t.Fatalf("= %d %s (%d dispatches); want 403 route_not_granted, nothing dispatched", got.Status, got.Body, dispatched)
				}
				if !strings.Contains(string(got.Body), rt.class.String()+" route") {
					t.Errorf("refusal %s does not name the route's class %s", got.Body, rt.class)
				}
			})
		}
	}
	// The refusal is logged with what an operator needs, and no query.
	logs := e.logs.String()
	for _, want := range []string{`"msg":"bundle api call refused: route class above the operation's"`,
		`"bundle":"echo"`, `"op":"tools/call"`, `"target":"fetch"`, `"method":"POST"`,
		`"route":"/api/v1/tasks/tsk_1/run"`, `"route_class":"destructive"`, `"allowed":"read"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
}

// TestRouteClassesReadOnlyOperations checks that resources/read,
// prompts/get and completion/complete may only call read routes.
func TestRouteClassesReadOnlyOperations(t *testing.T) {
	for _, tt := range []struct {
		route   string
		allowed bool
	}{
		{"GET /api/v1/tasks/tsk_1", true},
		{"PATCH /api/v1/tasks/tsk_1", false},
		{"POST /api/v1/tasks/tsk_1/run", false},
	} {
		t.Run(tt.route, func(t *testing.T) {
			cfg := bundle(t, "echo")
			cfg.Config = map[string]string{"op_api": tt.route}
			e := newEnv(t, nil, cfg)
			ctx, p := context.Background(), principal("org_a")
			want := " api=200 "
			if !tt.allowed {
				want = ` api=403 {"status":403,"errors":[{"code":"route_not_granted"`
			}
			res, err := e.r.ReadResource(ctx, p, &mcp.ReadResourceRequest{URI: "test://echo/readme", Client: era2026(), RequestID: "req_test"})
			if err != nil || !strings.Contains(res.Contents[0].Text, want) {
				t.Errorf("resources/read = %+v, %v; want %q", res, err, want)
			}
			prompts, _ := e.r.Prompts(ctx, p)
			pr, err := e.r.GetPrompt(ctx, p, &mcp.GetPromptRequest{Prompt: &prompts[0], Arguments: map[string]string{"who": "Ana"}, Client: era2026()})
			if b, _ := json.Marshal(pr); err != nil || !strings.Contains(string(b), strings.ReplaceAll(want, `"`, `\"`)) {
				t.Errorf("prompts/get = %s, %v; want %q", b, err, want)
			}
			req := &mcp.CompleteRequest{Ref: mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Client: era2026()}
			req.Argument.Name, req.Argument.Value = "who", "an"
			cr, err := e.r.Complete(ctx, p, req)
			if err != nil || len(cr.Completion.Values) != 3 || !strings.HasPrefix(cr.Completion.Values[2], want) {
				t.Errorf("completion/complete = %+v, %v; want a value starting %q", cr, err, want)
			}
			if n := len(e.api.recorded()); tt.allowed != (n == 3) || !tt.allowed && n != 0 {
				t.Errorf("the API saw %d calls; want %d", n, map[bool]int{true: 3, false: 0}[tt.allowed])
			}
		})
	}
}

// TestUnusableRoutes checks what `kadu plugins validate` warns about.
func TestUnusableRoutes(t *testing.T) {
	yes, no := true, false
	readOnly := &ManifestAnnotations{ReadOnlyHint: &yes}
	write := &ManifestAnnotations{ReadOnlyHint: &no, DestructiveHint: &no}
	destructive := &ManifestAnnotations{DestructiveHint: &yes}
	routes := []string{"GET /api/v1/tasks", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/nothing"}
	tests := []struct {
		name string
		m    Manifest
		want []string
	}{
		{"read-only tools", Manifest{Tools: []ManifestTool{{Annotations: readOnly}}, Routes: routes},
			[]string{"PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/nothing"}},
		{"resources only", Manifest{Resources: []ManifestResource{{}}, Routes: routes},
			[]string{"PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/nothing"}},
		{"a write tool", Manifest{Tools: []ManifestTool{{Annotations: readOnly}, {Annotations: write}}, Routes: routes},
			[]string{"POST /api/v1/tasks/{id}/run", "GET /api/v1/nothing"}},
		{"a destructive tool", Manifest{Tools: []ManifestTool{{Annotations: destructive}}, Routes: routes},
			[]string{"GET /api/v1/nothing"}},
		{"no annotations: destructive by default", Manifest{Tools: []ManifestTool{{}}, Routes: routes[:3]}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, u := range UnusableRoutes(&tt.m) {
				got = append(got, u.Route)
				if u.Reason == "" {
					t.Errorf("%s: no reason", u.Route)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("UnusableRoutes = %v, want %v", got, tt.want)
			}
		})
	}
}
