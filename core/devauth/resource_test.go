package devauth

import "testing"

func TestResolveResource(t *testing.T) {
	env := newTestEnv(t, func(o *Options) {
		o.Resource = "http://127.0.0.1:8080/mcp"
		o.ResourceAliases = []string{"http://localhost:8080/mcp"}
	})
	tests := []struct {
		name    string
		values  []string
		want    string
		wantErr bool
	}{
		{name: "absent: the fallback", values: nil, want: "fallback"},
		{name: "canonical", values: []string{"http://127.0.0.1:8080/mcp"}, want: "http://127.0.0.1:8080/mcp"},
		{name: "trailing slash", values: []string{"http://127.0.0.1:8080/mcp/"}, want: "http://127.0.0.1:8080/mcp"},
		{name: "alias gets tokens for the alias", values: []string{"http://localhost:8080/mcp"}, want: "http://localhost:8080/mcp"},
		{name: "other resource", values: []string{"http://evil.example/mcp"}, wantErr: true},
		{name: "two different resources", values: []string{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp"}, wantErr: true},
		{name: "the same one twice", values: []string{"http://localhost:8080/mcp", "http://localhost:8080/mcp/"}, want: "http://localhost:8080/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, oe := env.s.resolveResource(tt.values, "fallback")
			if tt.wantErr {
				if oe == nil || oe.Code != errInvalidTarget {
					t.Fatalf("resolveResource(%q) = %q, %v; want invalid_target", tt.values, got, oe)
				}
				return
			}
			if oe != nil || got != tt.want {
				t.Fatalf("resolveResource(%q) = %q, %v; want %q", tt.values, got, oe, tt.want)
			}
		})
	}
}
