// Package page serves the approval page of docs/reference/confirmation.md: the server-rendered
// page where a person confirms, or cancels, a destructive tool call that an
// AI client without in-chat confirmation asked for.
//
// It owns: GET and POST /approve/{id} and GET /approve/callback; signing the
// person in with the configured issuer as an OAuth client (authorization
// code + PKCE S256, issuer metadata discovery, RFC 8707 resource = the MCP
// URL, RFC 9207 iss check); the sealed cookies that carry a sign-in in
// progress and the signed-in identity (issuer, subject, organisation: never
// a token); the form token that binds a decision to that sign-in and that
// approval; the same-user check; the HTML in Portuguese and English, with
// its Content-Security-Policy.
//
// It must not: keep, log or forward an access token, an authorization code
// or a PKCE verifier (the token is verified and dropped in the callback);
// run a tool or change an approval itself (Approvals.Decide does, atomically,
// which is what makes every form single-use); treat anything an operation
// returned as markup or instructions (outcomes are shown escaped, as data);
// or need JavaScript.
//
// Wiring, once per process, in core/app:
//
//	p, err := page.New(page.Options{PublicURL: cfg.PublicOrigin(), Issuer: cfg.IssuerURL(),
//		ClientID: id, MCPURL: cfg.MCPURL(), Verify: verifier.Verify, Approvals: confirmer,
//		Describe: confirmer.Explain, ClientNames: dev.ClientName, Guard: origins, SealKey: key,
//		Audit: db})
//	p.Register(e)
//
// Any replica can serve any step: nothing is remembered in process memory
// but the issuer's metadata.
package page
