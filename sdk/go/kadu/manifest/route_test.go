package manifest

import (
	"strings"
	"testing"
)

func TestParseRoute(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" means valid
	}{
		{name: "literal path", in: "GET /api/v1/tasks"},
		{name: "parameter segment", in: "POST /api/v1/tasks/{id}/run"},
		{name: "no space", in: "GET/api/v1/tasks", wantErr: "want METHOD, one space"},
		{name: "lowercase method", in: "get /api/v1/tasks", wantErr: `method "get"`},
		{name: "unknown method", in: "TRACE /api/v1/tasks", wantErr: "want one of GET"},
		{name: "relative path", in: "GET api/v1/tasks", wantErr: "must start with /"},
		{name: "query in a pattern", in: "GET /api/v1/tasks?limit=1", wantErr: "no query"},
		{name: "empty segment", in: "GET /api//tasks", wantErr: "empty path segment"},
		{name: "trailing slash", in: "GET /api/v1/tasks/", wantErr: "empty path segment"},
		{name: "dot segment", in: "GET /api/v1/../admin", wantErr: `".." is not allowed`},
		{name: "parameter inside a segment", in: "GET /api/v1/tasks/x{id}", wantErr: "whole segment"},
		{name: "empty parameter", in: "GET /api/v1/tasks/{}", wantErr: "want {name}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRoute(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseRoute(%q) = %v, want no error", tt.in, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseRoute(%q) = %v, want an error containing %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestRouteCovers(t *testing.T) {
	tests := []struct {
		name         string
		grant, route string
		want         bool
	}{
		{name: "same literal route", grant: "GET /api/v1/tasks", route: "GET /api/v1/tasks", want: true},
		{name: "grant parameter covers a literal", grant: "GET /api/v1/tasks/{id}", route: "GET /api/v1/tasks/tsk_1", want: true},
		{name: "grant parameter covers a parameter", grant: "GET /api/v1/tasks/{id}", route: "GET /api/v1/tasks/{task}", want: true},
		{name: "grant literal does not cover a parameter", grant: "GET /api/v1/tasks/tsk_1", route: "GET /api/v1/tasks/{id}", want: false},
		{name: "other method", grant: "GET /api/v1/tasks/{id}", route: "DELETE /api/v1/tasks/{id}", want: false},
		{name: "longer route", grant: "GET /api/v1/tasks/{id}", route: "GET /api/v1/tasks/{id}/steps", want: false},
		{name: "other literal", grant: "GET /api/v1/tasks", route: "GET /api/v1/webhooks", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, r := mustRoute(t, tt.grant), mustRoute(t, tt.route)
			if got := g.Covers(r); got != tt.want {
				t.Fatalf("%q covers %q = %v, want %v", tt.grant, tt.route, got, tt.want)
			}
		})
	}
}

func mustRoute(t *testing.T, s string) Route {
	t.Helper()
	r, err := ParseRoute(s)
	if err != nil {
		t.Fatalf("ParseRoute(%q): %v", s, err)
	}
	return r
}
