package auth

import "context"

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p. Handlers behind the
// Middleware (and in-process dispatch from the MCP engine) read it back with
// PrincipalFrom.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal stored by WithPrincipal; ok is false
// when there is none (or it is nil).
func PrincipalFrom(ctx context.Context) (p *Principal, ok bool) {
	p, _ = ctx.Value(principalKey{}).(*Principal)
	return p, p != nil
}
