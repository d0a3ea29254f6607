package devauth

import (
	"slices"
	"strings"

	"github.com/kobana/kadu/core/auth"
)

// maxScopeLen bounds a requested scope string.
const maxScopeLen = 1024

// parseScope turns a requested scope string into the Kadu scopes to grant,
// in advertised order.
//
// An empty request grants every supported scope: on the developer server the
// role picked on the consent page is what limits a token (effective
// permission is role ∩ scopes), and a client that asks for nothing should
// be able to do whatever that role allows. Scopes that clients add on their
// own ("openid", "profile", "email", "offline_access") are accepted and not
// granted: no ID token is issued, and refresh tokens follow the client's
// registered grant types. Any other unknown scope is invalid_scope, and so is
// a request naming none of Kadu's scopes.
func parseScope(requested string) ([]string, *oauthError) {
	if len(requested) > maxScopeLen {
		return nil, oerr(errInvalidScope, "scope is longer than %d bytes", maxScopeLen)
	}
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		return auth.SupportedScopes(), nil
	}
	var granted []string
	for _, s := range fields {
		switch {
		case slices.Contains(auth.SupportedScopes(), s):
			granted = append(granted, s)
		case ignoredScope(s):
		default:
			return nil, oerr(errInvalidScope, "unknown scope %q (supported: %s)", s, strings.Join(auth.SupportedScopes(), " "))
		}
	}
	if len(granted) == 0 {
		return nil, oerr(errInvalidScope, "scope %q names none of the supported scopes (%s)", requested, strings.Join(auth.SupportedScopes(), " "))
	}
	return orderScopes(granted), nil
}

// ignoredScope reports whether s is a standard scope a client may add on its
// own, accepted but not granted.
func ignoredScope(s string) bool {
	switch s {
	case "openid", "profile", "email", "offline_access":
		return true
	}
	return false
}

// orderScopes returns the known scopes in scopes, deduplicated, in the order
// of auth.SupportedScopes.
func orderScopes(scopes []string) []string {
	var out []string
	for _, s := range auth.SupportedScopes() {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// scopeDescription says what a scope lets a client do, for the consent page.
func scopeDescription(s string) string {
	switch s {
	case auth.ScopeRead:
		return "Read tasks, files and results"
	case auth.ScopeWrite:
		return "Create and change data"
	case auth.ScopeRun:
		return "Run tools and tasks"
	case auth.ScopeAdmin:
		return "Administer the organisation"
	}
	return s
}
