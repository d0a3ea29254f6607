// Package devauth is Kadu's embedded developer OAuth 2.1 / OpenID Connect
// authorization server (docs/reference/auth.md, "Embedded developer default").
//
// It is mounted only when no external issuer is configured, on the same
// loopback origin as the MCP endpoint, so that MCP Inspector, VS Code,
// Claude Code, Cursor and the Go SDK client can sign in with nothing set up.
//
// It owns: the signing key and the sealing key persisted under
// DataDir/devauth, RFC 8414 and OIDC discovery metadata, the JWKS, RFC 7591
// dynamic client registration (clients are sealed into their client_id, so
// no database is needed), the authorization endpoint with its one-click
// consent page (a dev user, organisation and role picker), and the token
// endpoint (authorization_code with PKCE S256, refresh_token with rotation,
// and client_credentials only when Options.ClientCredentialsRole turns it
// on), issuing RFC 9068 at+jwt access tokens whose audience is the MCP
// resource.
//
// It must not: verify access tokens for the MCP endpoint (core/auth does,
// with the same code as in production, given KeySet and Algorithms), log or
// store a token, a code or a client secret, authenticate real people (whoever
// reaches the consent page may pick any identity: it is a development tool and
// is bound to loopback by core/app), hand a token to a client that merely
// registered (client_credentials is off by default), or be mounted when
// auth.issuer is set. Its routes sit behind core/app's Host and Origin guard
// (core/origin): a page on another site, even one whose name was rebound
// to 127.0.0.1, cannot register or exchange.
package devauth
