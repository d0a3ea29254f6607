package auth

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Principal is the identity a verified access token proved: who is calling,
// for which organisation, with which role and scopes.
//
// A Principal is immutable after Verify returns it and safe to share between
// goroutines. It never holds the token it was built from.
type Principal struct {
	Issuer   string    // the "iss" claim
	Subject  string    // the "sub" claim: the person (or client, for client credentials)
	OrgID    string    // the organisation claim (default claim name "org_id")
	Role     Role      // the role claim (default claim name "role")
	Scopes   []string  // granted scopes, sorted, deduplicated, not closed under the lattice
	ClientID string    // the OAuth client the token was issued to ("client_id" or "azp")
	Expiry   time.Time // the "exp" claim
}

// HasScope reports whether the principal's scopes, closed under the scope
// lattice, include s.
func (p *Principal) HasScope(s string) bool {
	for _, g := range p.Scopes {
		if g == s || implies(g, s) {
			return true
		}
	}
	return false
}

// Allows reports whether p may use something that requires role minRole and
// scope: effective permission is role ∩ scopes.
func (p *Principal) Allows(minRole Role, scope string) bool {
	return p.Role.AtLeast(minRole) && (scope == "" || p.HasScope(scope))
}

// Scopes Kadu understands. They form a lattice:
// kadu.admin ⊇ kadu.write ⊇ kadu.read and kadu.admin ⊇ kadu.run ⊇ kadu.read.
const (
	ScopeRead  = "kadu.read"
	ScopeWrite = "kadu.write"
	ScopeRun   = "kadu.run"
	ScopeAdmin = "kadu.admin"
)

// SupportedScopes lists the scopes in the order they are advertised.
func SupportedScopes() []string { return []string{ScopeRead, ScopeWrite, ScopeRun, ScopeAdmin} }

// implied lists, for each scope, the scopes it strictly contains.
var implied = map[string][]string{
	ScopeAdmin: {ScopeWrite, ScopeRun, ScopeRead},
	ScopeWrite: {ScopeRead},
	ScopeRun:   {ScopeRead},
}

func implies(granted, want string) bool { return slices.Contains(implied[granted], want) }

// CloseScopes returns scopes plus every scope they imply, sorted and
// deduplicated. Unknown scopes are kept as they are.
func CloseScopes(scopes []string) []string {
	out := make([]string, 0, len(scopes)+3)
	for _, s := range scopes {
		out = append(out, s)
		out = append(out, implied[s]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseScopes splits a space-separated scope string (RFC 6749 §3.3),
// returning the scopes sorted and deduplicated.
func ParseScopes(s string) []string {
	out := strings.Fields(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Role is what a person may do in their organisation. Roles are ordered:
// viewer < member < admin < owner.
type Role string

const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
	RoleOwner  Role = "owner"
)

// Roles lists the roles from least to most privileged.
func Roles() []Role { return []Role{RoleViewer, RoleMember, RoleAdmin, RoleOwner} }

func (r Role) rank() int { return slices.Index(Roles(), r) }

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return r.rank() >= 0 }

// AtLeast reports whether r is min or above it. An invalid role is below
// every role; an empty min is met by every valid role; an invalid, non-empty
// min is met by no role (a typo in a requirement fails closed).
func (r Role) AtLeast(min Role) bool {
	if min == "" {
		return r.Valid()
	}
	return r.Valid() && min.Valid() && r.rank() >= min.rank()
}

// ParseRole parses a role name, case-sensitively.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !r.Valid() {
		return "", fmt.Errorf("unknown role %q (want one of viewer, member, admin, owner)", s)
	}
	return r, nil
}
