package route

import (
	"strings"
	"testing"
)

func TestRouteMatchesRequest(t *testing.T) {
	tests := []struct {
		name           string
		pattern        string
		method, target string
		want           bool
	}{
		{name: "exact path", pattern: "GET /api/v1/tasks", method: "GET", target: "/api/v1/tasks", want: true},
		{name: "query ignored", pattern: "GET /api/v1/executions", method: "GET", target: "/api/v1/executions?status=failed&limit=10", want: true},
		{name: "parameter", pattern: "POST /api/v1/tasks/{id}/run", method: "POST", target: "/api/v1/tasks/tsk_1/run", want: true},
		{name: "percent-encoded literal compares decoded", pattern: "GET /api/v1/tasks", method: "GET", target: "/api/v1/t%61sks", want: true},
		{name: "wrong method", pattern: "GET /api/v1/tasks", method: "DELETE", target: "/api/v1/tasks", want: false},
		{name: "lowercase method", pattern: "GET /api/v1/tasks", method: "get", target: "/api/v1/tasks", want: false},
		{name: "dot-dot escapes the parameter", pattern: "GET /api/v1/tasks/{id}", method: "GET", target: "/api/v1/tasks/..", want: false},
		{name: "encoded dot-dot", pattern: "GET /api/v1/tasks/{id}", method: "GET", target: "/api/v1/tasks/%2e%2e", want: false},
		{name: "encoded slash in a parameter", pattern: "GET /api/v1/tasks/{id}", method: "GET", target: "/api/v1/tasks/a%2Fb", want: false},
		{name: "empty segment", pattern: "GET /api/v1/tasks/{id}", method: "GET", target: "/api/v1/tasks/", want: false},
		{name: "double slash", pattern: "GET /api/v1/tasks", method: "GET", target: "/api//v1/tasks", want: false},
		{name: "space", pattern: "GET /api/v1/tasks/{id}", method: "GET", target: "/api/v1/tasks/a b", want: false},
		{name: "fragment", pattern: "GET /api/v1/tasks", method: "GET", target: "/api/v1/tasks#x", want: false},
		{name: "relative", pattern: "GET /api/v1/tasks", method: "GET", target: "api/v1/tasks", want: false},
		{name: "absolute URL", pattern: "GET /api/v1/tasks", method: "GET", target: "http://evil.test/api/v1/tasks", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustRoute(t, tt.pattern)
			segs, err := Segments(tt.target)
			got := err == nil && p.Matches(tt.method, segs)
			if got != tt.want {
				t.Fatalf("%q matches %s %q = %v (segments %q, err %v), want %v", tt.pattern, tt.method, tt.target, got, segs, err, tt.want)
			}
		})
	}
}

// FuzzRequestSegments checks that whatever a guest sends as a path, an
// accepted one never contains a segment a router could resolve elsewhere.
func FuzzRequestSegments(f *testing.F) {
	for _, s := range []string{"/api/v1/tasks", "/api/v1/tasks/%2e%2e", "/a/b?c=d", "//", "/%zz", "/a%2Fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		segs, err := Segments(target)
		if err != nil {
			return
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\") {
				t.Fatalf("Segments(%q) accepted segment %q", target, s)
			}
		}
	})
}

func mustRoute(t *testing.T, s string) Pattern {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return r
}
