package routeclass

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTableWellFormed checks every row: a class, a path under Prefix, and
// no two rows a request could match both.
func TestTableWellFormed(t *testing.T) {
	rows := Routes()
	for i, r := range rows {
		if r.Class < Read || r.Class > Destructive {
			t.Errorf("%s has no class", r)
		}
		if !strings.HasPrefix(r.Path, Prefix+"/") {
			t.Errorf("%s is not under %s", r, Prefix)
		}
		for _, o := range rows[:i] {
			if o.Method == r.Method && matches(split(o.Path), split(r.Path), nil) {
				t.Errorf("a request could match both %s and %s", o, r)
			}
		}
	}
}

func TestOf(t *testing.T) {
	tab := New()
	tests := []struct {
		method, path string
		want         Class
	}{
		{"GET", "/api/v1/tasks", Read},
		{"GET", "/api/v1/tasks/tsk_1", Read},
		{"POST", "/api/v1/tasks", Write},
		{"PATCH", "/api/v1/tasks/tsk_1", Write},
		{"POST", "/api/v1/files/file_1/confirm", Write},
		{"POST", "/api/v1/tasks/tsk_1/run", Destructive},
		{"DELETE", "/api/v1/tasks/tsk_1", Destructive},
		{"POST", "/api/v1/executions/exe_1/continue", Destructive},
		{"POST", "/api/v1/webhook_deliveries/dlv_1/replay", Destructive},
		{"POST", "/api/v1/webhooks/whk_1/rotate_secret", Destructive},
		{"GET", "/api/v1/tasks/tsk_1/run", Unknown},
		{"GET", "/api/v1/nothing", Unknown},
		{"GET", "/api/v2/tasks", Unknown},
	}
	for _, tt := range tests {
		segs := strings.Split(strings.TrimPrefix(tt.path, "/"), "/")
		if got := tab.Of(tt.method, segs); got != tt.want {
			t.Errorf("Of(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestOfPattern(t *testing.T) {
	tab := New()
	tests := []struct {
		pattern string
		want    Class
	}{
		{"GET /api/v1/tasks/{task}", Read},
		{"POST /api/v1/tasks/tsk_1/run", Destructive},
		{"POST /api/v1/tasks/{id}/{action}", Destructive}, // could reach run
		{"POST /api/v1/files/{id}/{action}", Write},
		{"DELETE /api/v1/{kind}/{id}", Destructive},
		{"GET /api/v1/{kind}", Read},
		{"PUT /api/v1/usage", Unknown},
	}
	for _, tt := range tests {
		method, path, _ := strings.Cut(tt.pattern, " ")
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		params := make([]bool, len(segs))
		for i, s := range segs {
			params[i] = strings.HasPrefix(s, "{")
		}
		if got := tab.OfPattern(method, segs, params); got != tt.want {
			t.Errorf("OfPattern(%s) = %v, want %v", tt.pattern, got, tt.want)
		}
	}
}

// TestABIDocumentsTheTable checks that sdk/ABI.md's copy of the table,
// which partners read, is the table the host enforces.
func TestABIDocumentsTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../../sdk/ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z]+)` \\| `(/api/v1/[^`]*)` \\| ([a-z]+) \\|$")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1]+" "+m[2]+" "+m[3])
	}
	var want []string
	for _, r := range Routes() {
		want = append(want, r.String()+" "+r.Class.String())
	}
	if !slices.Equal(documented, want) {
		t.Errorf("sdk/ABI.md's route classes differ from the table; write them in the table's order:\n got %q\nwant %q", documented, want)
	}
}

// TestRowsComplete checks what every row must say for core/api to serve it
// and core/api/openapi to document it: the access, the bundle granted it,
// an answer, and tools named once.
func TestRowsComplete(t *testing.T) {
	roles := []string{"viewer", "member", "admin", "owner"}
	scopes := []string{"read", "write", "run", "admin"}
	tools := map[string]string{}
	for _, r := range Routes() {
		if !slices.Contains(roles, r.Role) || !slices.Contains(scopes, r.Scope) {
			t.Errorf("%s: role %q, scope %q; want one of %v and of %v", r, r.Role, r.Scope, roles, scopes)
		}
		if r.Bundle == "" || r.Summary == "" || r.Response == "" || len(r.Statuses) == 0 {
			t.Errorf("%s: bundle %q, summary %q, response %q, statuses %v; want all", r, r.Bundle, r.Summary, r.Response, r.Statuses)
		}
		if (r.Method == "GET") != (r.Class == Read) {
			t.Errorf("%s is %v: every GET is a read and only GETs are", r, r.Class)
		}
		if r.Method == "GET" && (r.Request != "" || !r.Idempotent) {
			t.Errorf("%s: a GET takes no body and is idempotent", r)
		}
		if r.Tool == "" {
			continue
		}
		if prev, dup := tools[r.Tool]; dup {
			t.Errorf("tool %s mirrors both %s and %s", r.Tool, prev, r)
		}
		tools[r.Tool] = r.String()
	}
}

func TestGrants(t *testing.T) {
	got := Grants("executions")
	if len(got) != 7 || got[0] != "GET /api/v1/executions" || got[6] != "GET /api/v1/approvals/{id}" {
		t.Errorf("Grants(executions) = %v", got)
	}
	if g := Grants("nothing"); g != nil {
		t.Errorf("Grants(nothing) = %v, want nil", g)
	}
}
