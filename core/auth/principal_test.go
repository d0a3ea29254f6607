package auth

import (
	"slices"
	"testing"
)

func TestHasScope(t *testing.T) {
	tests := []struct {
		granted []string
		want    map[string]bool // scope → expected HasScope
	}{
		{granted: nil, want: map[string]bool{ScopeRead: false, ScopeWrite: false, ScopeRun: false, ScopeAdmin: false}},
		{granted: []string{ScopeRead}, want: map[string]bool{ScopeRead: true, ScopeWrite: false, ScopeRun: false, ScopeAdmin: false}},
		{granted: []string{ScopeWrite}, want: map[string]bool{ScopeRead: true, ScopeWrite: true, ScopeRun: false, ScopeAdmin: false}},
		{granted: []string{ScopeRun}, want: map[string]bool{ScopeRead: true, ScopeWrite: false, ScopeRun: true, ScopeAdmin: false}},
		{granted: []string{ScopeWrite, ScopeRun}, want: map[string]bool{ScopeRead: true, ScopeWrite: true, ScopeRun: true, ScopeAdmin: false}},
		{granted: []string{ScopeAdmin}, want: map[string]bool{ScopeRead: true, ScopeWrite: true, ScopeRun: true, ScopeAdmin: true}},
		{granted: []string{"openid", "kadu.Read"}, want: map[string]bool{ScopeRead: false, "openid": true, "kadu.Read": true}},
	}
	for _, tt := range tests {
		p := &Principal{Scopes: tt.granted}
		for scope, want := range tt.want {
			if got := p.HasScope(scope); got != want {
				t.Errorf("Principal{Scopes: %q}.HasScope(%q) = %v, want %v", tt.granted, scope, got, want)
			}
		}
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		name    string
		role    Role
		scopes  []string
		minRole Role
		scope   string
		want    bool
	}{
		{name: "viewer reads", role: RoleViewer, scopes: []string{ScopeRead}, minRole: RoleViewer, scope: ScopeRead, want: true},
		{name: "admin scope, viewer role, admin route", role: RoleViewer, scopes: []string{ScopeAdmin}, minRole: RoleAdmin, scope: ScopeAdmin, want: false},
		{name: "owner role, read scope, run route", role: RoleOwner, scopes: []string{ScopeRead}, minRole: RoleMember, scope: ScopeRun, want: false},
		{name: "member runs with admin scope", role: RoleMember, scopes: []string{ScopeAdmin}, minRole: RoleMember, scope: ScopeRun, want: true},
		{name: "no scope required", role: RoleMember, minRole: RoleMember, want: true},
		{name: "no role required", role: RoleViewer, scopes: []string{ScopeRead}, scope: ScopeRead, want: true},
		{name: "invalid role", role: "root", scopes: []string{ScopeAdmin}, minRole: RoleViewer, scope: ScopeRead, want: false},
		{name: "invalid role, nothing required", role: "", scopes: []string{ScopeAdmin}, want: false},
		{name: "invalid requirement", role: RoleOwner, scopes: []string{ScopeAdmin}, minRole: "superuser", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Principal{Role: tt.role, Scopes: tt.scopes}
			if got := p.Allows(tt.minRole, tt.scope); got != tt.want {
				t.Fatalf("Allows(%q, %q) = %v, want %v", tt.minRole, tt.scope, got, tt.want)
			}
		})
	}
}

func TestRoleAtLeast(t *testing.T) {
	roles := Roles()
	if want := []Role{RoleViewer, RoleMember, RoleAdmin, RoleOwner}; !slices.Equal(roles, want) {
		t.Fatalf("Roles() = %q, want %q", roles, want)
	}
	for i, r := range roles {
		for j, min := range roles {
			if got, want := r.AtLeast(min), i >= j; got != want {
				t.Errorf("%s.AtLeast(%s) = %v, want %v", r, min, got, want)
			}
		}
		if !r.AtLeast("") {
			t.Errorf("%s.AtLeast(\"\") = false", r)
		}
		if r.AtLeast("superuser") {
			t.Errorf("%s.AtLeast(superuser) = true", r)
		}
	}
	for _, bad := range []Role{"", "Owner", "root"} {
		if bad.Valid() || bad.AtLeast("") || bad.AtLeast(RoleViewer) {
			t.Errorf("invalid role %q passes", bad)
		}
	}
}

func TestParseRole(t *testing.T) {
	tests := []struct {
		in      string
		want    Role
		wantErr bool
	}{
		{"viewer", RoleViewer, false},
		{"member", RoleMember, false},
		{"admin", RoleAdmin, false},
		{"owner", RoleOwner, false},
		{"Owner", "", true},
		{"", "", true},
		{" admin", "", true},
	}
	for _, tt := range tests {
		got, err := ParseRole(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseRole(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCloseScopes(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "empty", in: nil, want: []string{}},
		{name: "read", in: []string{ScopeRead}, want: []string{ScopeRead}},
		{name: "write", in: []string{ScopeWrite}, want: []string{ScopeRead, ScopeWrite}},
		{name: "run", in: []string{ScopeRun}, want: []string{ScopeRead, ScopeRun}},
		{name: "admin", in: []string{ScopeAdmin}, want: []string{ScopeAdmin, ScopeRead, ScopeRun, ScopeWrite}},
		{name: "duplicates and unknown", in: []string{"offline_access", ScopeRun, ScopeRead, ScopeRun}, want: []string{ScopeRead, ScopeRun, "offline_access"}},
		{name: "write and admin", in: []string{ScopeWrite, ScopeAdmin}, want: []string{ScopeAdmin, ScopeRead, ScopeRun, ScopeWrite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			if got := CloseScopes(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("CloseScopes(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Fatalf("CloseScopes modified its argument: %q", tt.in)
			}
		})
	}
}

func TestParseScopes(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"kadu.run kadu.read", []string{"kadu.read", "kadu.run"}},
		{"  kadu.read   kadu.read\tkadu.write ", []string{"kadu.read", "kadu.write"}},
	}
	for _, tt := range tests {
		if got := ParseScopes(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ParseScopes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSupportedScopes(t *testing.T) {
	want := []string{"kadu.read", "kadu.write", "kadu.run", "kadu.admin"}
	got := SupportedScopes()
	if !slices.Equal(got, want) {
		t.Fatalf("SupportedScopes() = %q, want %q", got, want)
	}
	got[0] = "mutated"
	if SupportedScopes()[0] != "kadu.read" {
		t.Fatal("SupportedScopes returns shared state")
	}
}
