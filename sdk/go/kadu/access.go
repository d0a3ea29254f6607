package kadu

import (
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Role is a person's role in their organisation (docs/reference/auth.md), from least to
// most: viewer, member, admin, owner.
type Role string

// Roles.
const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
	RoleOwner  Role = "owner"
)

// Scope is an OAuth scope of Kadu without its "kadu." prefix. Scopes form a
// lattice: admin ⊇ write ⊇ read and admin ⊇ run ⊇ read.
type Scope string

// Scopes.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeRun   Scope = "run"
	ScopeAdmin Scope = "admin"
)

// Access is the permission a caller needs for the host to list and run an
// entry: a role at least MinRole and the Scope among the token's scopes.
// It is the first gate only: the API checks its own rules again on every
// request the handler makes.
type Access struct {
	MinRole Role
	Scope   Scope
}

func (a Access) check() error {
	switch a.MinRole {
	case RoleViewer, RoleMember, RoleAdmin, RoleOwner:
	default:
		return fmt.Errorf("Access.MinRole %q: want viewer, member, admin or owner", a.MinRole)
	}
	switch a.Scope {
	case ScopeRead, ScopeWrite, ScopeRun, ScopeAdmin:
	default:
		return fmt.Errorf("Access.Scope %q: want read, write, run or admin", a.Scope)
	}
	return nil
}

// def is a as the manifest writes it.
func (a Access) def() *manifest.Access {
	return &manifest.Access{MinRole: string(a.MinRole), Scope: string(a.Scope)}
}
