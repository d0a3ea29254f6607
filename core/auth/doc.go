// Package auth makes Kadu an OAuth 2.1 resource server (docs/reference/auth.md).
//
// It owns: verifying JWT access tokens with go-oidc against the configured
// issuer (pinned algorithms, audience = the public MCP URL, at+jwt, lifetime
// cap, rate-limited JWKS refetch), building the Principal from claims, the
// scope lattice and role order, the exact 401/403 challenges, and the
// Protected Resource Metadata document.
//
// It must not: keep, log or hand on a raw token (it is dropped as soon as the
// Principal is built), know MCP or REST wire formats beyond the challenge
// header, or issue tokens (core/devauth does that in development).
//
// Wiring, once per process: NewVerifier (config → Options) → NewAuthenticator
// with the same public MCP URL → Authenticate on the MCP endpoint, Middleware
// on /api/v1, and MetadataHandler mounted at every MetadataPaths entry. A
// tool the role allows but the scopes lack answers InsufficientScope.
// RATIONALE.md records why the rules are what they are.
package auth
