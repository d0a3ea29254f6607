package auth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// Errors a Verifier returns. Every rejection wraps exactly one of them, so
// callers sort failures with errors.Is; the text after the sentinel is the
// reason, meant for logs and never for the client.
var (
	// ErrInvalidToken marks a token that is not a valid Kadu access token:
	// bad signature, wrong issuer or audience, expired, not an access token,
	// missing or malformed claims. The client gets 401 invalid_token.
	ErrInvalidToken = errors.New("invalid token")

	// ErrKeysUnavailable marks a token that could not be checked because the
	// issuer's signing keys could not be fetched (network error, bad JWKS,
	// failed discovery) and no cached key matches it. It says nothing about
	// the token; the client gets 503 and should retry.
	ErrKeysUnavailable = errors.New("signing keys unavailable")
)

// Defaults for Options fields left zero.
const (
	DefaultMaxTokenLifetime   = 24 * time.Hour
	DefaultClockSkew          = 30 * time.Second
	DefaultMinRefetchInterval = 10 * time.Second
	DefaultOrgClaim           = "org_id"
	DefaultRoleClaim          = "role"
	DefaultScopeClaim         = "scope"

	defaultHTTPTimeout = 10 * time.Second
	maxTokenBytes      = 16 << 10 // longer bearer tokens are refused before parsing
)

// DefaultAlgorithms are the signing algorithms accepted when
// Options.Algorithms is empty.
func DefaultAlgorithms() []string { return []string{"RS256", "ES256"} }

// asymmetricAlgs are the algorithms Options.Algorithms may pin.
var asymmetricAlgs = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
}

// Options configures a Verifier. Zero fields take the default stated beside
// them. Options are copied by NewVerifier; changing them afterwards has no
// effect.
type Options struct {
	// Issuer is the expected "iss", compared exactly. Required.
	Issuer string
	// Resource is the public MCP URL. "aud" (a string or an array) must
	// contain it, with or without one trailing slash. Required, absolute
	// http(s) URL.
	Resource string
	// Audiences are further accepted audiences, compared like Resource.
	Audiences []string
	// Algorithms pins the accepted "alg" values. Default DefaultAlgorithms().
	// "none" and the HMAC algorithms (HS256, HS384, HS512) are refused.
	Algorithms []string

	// OrgClaim names the organisation claim, a non-empty string. Default "org_id".
	OrgClaim string
	// RoleClaim names the role claim, one of the four roles. Default "role".
	RoleClaim string
	// ScopeClaim names the scope claim: a space-separated string or an array
	// of strings. When it is absent, "scp" (string or array) is read instead.
	// Default "scope".
	ScopeClaim string

	// RequireATJWT requires the JOSE header "typ" to be "at+jwt" or
	// "application/at+jwt" (RFC 9068, case-insensitive). The zero value is
	// false; Kadu's configuration turns it on by default.
	RequireATJWT bool
	// MaxTokenLifetime caps exp - iat (exp - now when there is no iat).
	// Default 24h.
	MaxTokenLifetime time.Duration
	// ClockSkew is the leeway on exp, nbf and iat. Default 30s.
	ClockSkew time.Duration

	// KeySet, when set, verifies signatures in process (the embedded dev
	// authorization server passes its own keys) and JWKSURL, HTTPClient and
	// MinRefetchInterval are ignored. When nil, keys are fetched from the
	// issuer's JWKS.
	KeySet oidc.KeySet
	// JWKSURL is the issuer's JWKS location. When empty it is discovered on
	// first use from the issuer's metadata (/.well-known/openid-configuration,
	// then /.well-known/oauth-authorization-server).
	JWKSURL string
	// HTTPClient fetches metadata and keys. Default: 10 s timeout, redirects
	// only within the same host.
	HTTPClient *http.Client
	// MinRefetchInterval is the least time between two JWKS fetches caused
	// by an unknown "kid" (or a failed fetch). Default 10s.
	MinRefetchInterval time.Duration

	// IssuerHint tells the holder of a token another issuer signed how to
	// get one from Issuer (the embedded development issuer: which command
	// mints it). It is sent in the 401: appended to error_description and as
	// the API body's hint. Default: sign in again through the metadata.
	IssuerHint string

	// Logger receives key-fetch events; never a token. Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Verifier checks JWT access tokens issued for this resource server and
// turns them into Principals.
//
// A Verifier is safe for concurrent use and meant to live as long as the
// process. It keeps no token: the raw string is dropped when Verify returns.
// With a remote key set it caches the issuer's keys, refreshes them at most
// once per MinRefetchInterval when a token names an unknown "kid", and
// refreshes them in the background once they are an hour old (a key the
// issuer withdrew stays trusted for at most that hour). It holds no
// resources that need closing; a key fetch in flight ends within 15 s.
type Verifier struct {
	// fixed at creation
	issuer       string
	accepted     []string // audiences, without a trailing slash
	algs         []jose.SignatureAlgorithm
	orgClaim     string
	roleClaim    string
	scopeClaim   string
	requireATJWT bool
	issuerHint   string
	maxLifetime  time.Duration
	skew         time.Duration
	now          func() time.Time
	oidc         *oidc.IDTokenVerifier
	remote       *remoteKeySet // nil when Options.KeySet is set
}

var _ TokenVerifier = (*Verifier)(nil)

// NewVerifier validates opts and returns a Verifier. It does no I/O: a
// remote key set is fetched on the first Verify.
func NewVerifier(opts Options) (*Verifier, error) {
	var errs []error
	if opts.Issuer == "" {
		errs = append(errs, errors.New("auth: Issuer is required"))
	} else if err := checkHTTPURL(opts.Issuer); err != nil {
		errs = append(errs, fmt.Errorf("auth: Issuer: %w", err))
	}
	if opts.Resource == "" {
		errs = append(errs, errors.New("auth: Resource is required"))
	} else if err := checkHTTPURL(opts.Resource); err != nil {
		errs = append(errs, fmt.Errorf("auth: Resource: %w", err))
	}
	for i, a := range opts.Audiences {
		if a == "" {
			errs = append(errs, fmt.Errorf("auth: Audiences[%d] is empty", i))
		}
	}
	if opts.JWKSURL != "" && opts.KeySet == nil {
		if err := checkHTTPURL(opts.JWKSURL); err != nil {
			errs = append(errs, fmt.Errorf("auth: JWKSURL: %w", err))
		}
	}
	algNames := opts.Algorithms
	if len(algNames) == 0 {
		algNames = DefaultAlgorithms()
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(algNames))
	for i, a := range algNames {
		if err := checkAlgorithm(a); err != nil {
			errs = append(errs, fmt.Errorf("auth: Algorithms[%d]: %w", i, err))
			continue
		}
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"MaxTokenLifetime", opts.MaxTokenLifetime},
		{"ClockSkew", opts.ClockSkew},
		{"MinRefetchInterval", opts.MinRefetchInterval},
	} {
		if d.d < 0 {
			errs = append(errs, fmt.Errorf("auth: %s must not be negative, got %s", d.name, d.d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	v := &Verifier{
		issuer:       opts.Issuer,
		accepted:     []string{trimSlash(opts.Resource)},
		algs:         algs,
		orgClaim:     cmp.Or(opts.OrgClaim, DefaultOrgClaim),
		roleClaim:    cmp.Or(opts.RoleClaim, DefaultRoleClaim),
		scopeClaim:   cmp.Or(opts.ScopeClaim, DefaultScopeClaim),
		requireATJWT: opts.RequireATJWT,
		issuerHint:   opts.IssuerHint,
		maxLifetime:  cmp.Or(opts.MaxTokenLifetime, DefaultMaxTokenLifetime),
		skew:         cmp.Or(opts.ClockSkew, DefaultClockSkew),
		now:          opts.Now,
	}
	for _, a := range opts.Audiences {
		v.accepted = append(v.accepted, trimSlash(a))
	}
	if v.now == nil {
		v.now = time.Now
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	keySet := opts.KeySet
	if keySet == nil {
		client := opts.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: defaultHTTPTimeout, CheckRedirect: sameHostRedirects}
		}
		v.remote = &remoteKeySet{
			client:      client,
			issuer:      opts.Issuer,
			jwksURL:     opts.JWKSURL,
			algs:        algs,
			minInterval: cmp.Or(opts.MinRefetchInterval, DefaultMinRefetchInterval),
			maxAge:      keyMaxAge,
			now:         v.now,
			logger:      logger,
		}
		keySet = v.remote
	}
	v.oidc = oidc.NewVerifier(opts.Issuer, keySet, &oidc.Config{
		// Audience is checked by Verify itself, to accept a trailing-slash
		// variant of the resource and the extra Audiences.
		SkipClientIDCheck: true,
		// Issuer is checked by Verify itself, after the signature, so that
		// the refusal can name both issuers (wrongIssuer).
		SkipIssuerCheck:      true,
		SupportedSigningAlgs: algNames,
		// go-oidc has no leeway on exp: shifting its clock back by the skew
		// accepts a token up to ClockSkew after it expired.
		Now: func() time.Time { return v.now().Add(-v.skew) },
	})
	return v, nil
}

// Verify checks raw and returns the Principal it proves. Every error wraps
// ErrInvalidToken or ErrKeysUnavailable followed by the reason. raw is
// neither logged nor kept, and no error text contains it.
//
// The checks, in order: size and compact JWS syntax with a pinned "alg";
// header "typ" (the ID-token rule below); the signing key (remote key sets:
// fetched or refetched as needed); signature, "iss" and "exp" (go-oidc, with
// ClockSkew); "aud"; "nbf", "iat" and the lifetime cap; ID-token claims;
// "sub"; the organisation, role and scope claims.
//
// ID-token rule. A token is refused as an ID token (or other non-access
// JWT) when any of these holds:
//   - RequireATJWT is on and "typ" is not at+jwt / application/at+jwt
//     (an ID token says "JWT" or nothing);
//   - "typ" is present and is anything but JWT or at+jwt (logout+jwt,
//     secevent+jwt, dpop+jwt, …), whatever RequireATJWT says;
//   - the claims carry "nonce", "at_hash", "c_hash" or "s_hash", which only
//     OpenID Connect ID tokens carry;
//   - the claim "typ" is "ID" (Keycloak marks its ID tokens so).
//
// Besides, an ID token's "aud" is the client's id, not this server's URL, so
// the audience check refuses it too unless a client was registered with the
// resource URL as its id.
//
// Claim rules. "sub" must be a non-empty string. The organisation claim must
// be a non-empty string. The role claim must be present and name one of the
// four roles: a missing role is invalid rather than defaulting to viewer, so
// a misconfigured issuer fails loudly instead of granting quietly. Scopes
// come from the scope claim (string or array) or, when it is absent, "scp";
// no scope claim means no scopes, which is valid (every tool then answers
// with the step-up challenge). Unknown scopes are kept, so a step-up
// challenge asks again for what the client already had (offline_access …).
// The client id is "client_id", else "azp", else empty.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	if raw == "" {
		return nil, invalid("empty token")
	}
	if len(raw) > maxTokenBytes {
		return nil, invalid("token longer than %d bytes", maxTokenBytes)
	}
	jws, err := jose.ParseSignedCompact(raw, v.algs)
	if err != nil {
		return nil, fmt.Errorf("%w: not a compact JWS with an allowed algorithm: %w", ErrInvalidToken, err)
	}
	if len(jws.Signatures) != 1 {
		return nil, invalid("want one signature, got %d", len(jws.Signatures))
	}
	hdr := jws.Signatures[0].Protected
	if err := v.checkType(hdr); err != nil {
		return nil, err
	}
	if v.remote != nil {
		// Resolve the key first so a JWKS outage surfaces as
		// ErrKeysUnavailable: go-oidc flattens key-set errors to text.
		keys, err := v.remote.keys(ctx, hdr.KeyID)
		if err != nil {
			return nil, err
		}
		// The signature is checked against these same keys: a background
		// refresh landing between the two lookups must not make one token
		// see two key sets.
		ctx = withResolvedKeys(ctx, hdr.KeyID, keys)
	}

	tok, err := v.oidc.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if tok.Issuer != v.issuer {
		return nil, v.wrongIssuer(tok.Issuer)
	}
	if !v.audienceOK(tok.Audience) {
		return nil, invalid("audience %s does not contain the resource", clipList(tok.Audience))
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %w", ErrInvalidToken, err)
	}
	if err := v.checkTimes(tok, claims); err != nil {
		return nil, err
	}
	if err := checkNotIDToken(claims); err != nil {
		return nil, err
	}
	return v.principal(tok, claims)
}

// errWrongIssuer is the logged cause of a token whose "iss" is not the
// configured issuer.
var errWrongIssuer = errors.New("issuer mismatch")

// wrongIssuer refuses a token with a valid signature whose "iss" is
// another issuer's — typically one `kadu token` minted for another --addr
// or public URL, signed with the same development key. Both issuers are
// public (the metadata names this one; the caller sent the other), so the
// 401 says which was expected and how to get a matching token.
func (v *Verifier) wrongIssuer(got string) error {
	desc := fmt.Sprintf("issued by %s, not by this server's issuer %s", clip(got), v.issuer)
	hint := "Get a new access token from " + v.issuer + " (sign in again: the resource_metadata URL in WWW-Authenticate names it), then retry."
	if v.issuerHint != "" {
		desc += "; " + v.issuerHint
		hint = strings.ToUpper(v.issuerHint[:1]) + v.issuerHint[1:] + ", then retry."
	}
	return &describedError{desc: desc, hint: hint, err: errWrongIssuer}
}

// checkType applies the header half of the ID-token rule.
func (v *Verifier) checkType(hdr jose.Header) error {
	typ := ""
	if t, ok := hdr.ExtraHeaders[jose.HeaderType]; ok {
		s, isString := t.(string)
		if !isString {
			return invalid("header typ is not a string")
		}
		// RFC 7515 §4.1.9: a typ without "/" means "application/<typ>".
		typ = strings.TrimPrefix(strings.ToLower(s), "application/")
	}
	switch {
	case typ == "at+jwt":
		return nil
	case v.requireATJWT && typ == "":
		return invalid("header typ missing, want at+jwt")
	case v.requireATJWT:
		return invalid("header typ %q, want at+jwt", clip(typ))
	case typ == "" || typ == "jwt":
		return nil
	default:
		return invalid("header typ %q is not an access token type", clip(typ))
	}
}

func (v *Verifier) audienceOK(aud []string) bool {
	for _, a := range aud {
		if slices.Contains(v.accepted, trimSlash(a)) {
			return true
		}
	}
	return false
}

// checkTimes checks nbf and iat with the skew and the lifetime cap. exp was
// checked by go-oidc.
func (v *Verifier) checkTimes(tok *oidc.IDToken, claims map[string]json.RawMessage) error {
	now := v.now()
	if raw, ok := claims["nbf"]; ok {
		nbf, err := numericDate(raw)
		if err != nil {
			return invalid("nbf: %v", err)
		}
		if nbf.After(now.Add(v.skew)) {
			return invalid("not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	start := now
	if _, ok := claims["iat"]; ok {
		iat := tok.IssuedAt
		if iat.After(now.Add(v.skew)) {
			return invalid("issued in the future (%s)", iat.UTC().Format(time.RFC3339))
		}
		if tok.Expiry.Before(iat) {
			return invalid("expires before it was issued")
		}
		start = iat
	}
	if life := tok.Expiry.Sub(start); life > v.maxLifetime {
		return invalid("lifetime %s exceeds the cap of %s", life, v.maxLifetime)
	}
	return nil
}

// idTokenClaims are claims only OpenID Connect ID tokens carry.
var idTokenClaims = []string{"nonce", "at_hash", "c_hash", "s_hash"}

// checkNotIDToken applies the claims half of the ID-token rule.
func checkNotIDToken(claims map[string]json.RawMessage) error {
	for _, c := range idTokenClaims {
		if _, ok := claims[c]; ok {
			return invalid("carries the ID-token claim %q", c)
		}
	}
	if raw, ok := claims["typ"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && strings.EqualFold(s, "ID") {
			return invalid(`claim typ is "ID"`)
		}
	}
	return nil
}

// principal builds the Principal from verified claims.
func (v *Verifier) principal(tok *oidc.IDToken, claims map[string]json.RawMessage) (*Principal, error) {
	if tok.Subject == "" {
		return nil, invalid("sub missing or empty")
	}
	org, ok, err := claimString(claims, v.orgClaim)
	switch {
	case err != nil:
		return nil, invalid("organisation claim %q: %v", v.orgClaim, err)
	case !ok || org == "":
		return nil, invalid("organisation claim %q missing or empty", v.orgClaim)
	}
	if err := CheckOrgID(org); err != nil {
		// Said to the caller: the issuer, not the client, must change.
		return nil, &describedError{
			desc: fmt.Sprintf("organisation claim %q is not a valid organisation id (want %s)", v.orgClaim, OrgIDRule),
			hint: "The token's issuer must put a valid organisation id in the " + v.orgClaim + " claim; ask its operator to fix the issuer's claim mapping, then get a new token.",
			err:  err,
		}
	}
	roleName, ok, err := claimString(claims, v.roleClaim)
	switch {
	case err != nil:
		return nil, invalid("role claim %q: %v", v.roleClaim, err)
	case !ok:
		return nil, invalid("role claim %q missing", v.roleClaim)
	}
	role := Role(roleName)
	if !role.Valid() {
		return nil, invalid("role claim %q: unknown role %q", v.roleClaim, clip(roleName))
	}
	scopes, ok, err := claimScopes(claims, v.scopeClaim)
	if err != nil {
		return nil, invalid("scope claim %q: %v", v.scopeClaim, err)
	}
	if !ok {
		if scopes, _, err = claimScopes(claims, "scp"); err != nil {
			return nil, invalid(`scope claim "scp": %v`, err)
		}
	}
	clientID, ok, err := claimString(claims, "client_id")
	if err != nil {
		return nil, invalid("client_id: %v", err)
	}
	if !ok {
		if clientID, _, err = claimString(claims, "azp"); err != nil {
			return nil, invalid("azp: %v", err)
		}
	}
	return &Principal{
		Issuer:   tok.Issuer,
		Subject:  tok.Subject,
		OrgID:    org,
		Role:     role,
		Scopes:   scopes,
		ClientID: clientID,
		Expiry:   tok.Expiry,
	}, nil
}

// claimString reads a string claim. ok is false when the claim is absent
// or null.
func claimString(claims map[string]json.RawMessage, name string) (s string, ok bool, err error) {
	raw, present := claims[name]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, errors.New("not a string")
	}
	return s, true, nil
}

// claimScopes reads a scope claim given as a space-separated string or an
// array of strings. The result is sorted and deduplicated.
func claimScopes(claims map[string]json.RawMessage, name string) (scopes []string, ok bool, err error) {
	raw, present := claims[name]
	if !present || string(raw) == "null" {
		return nil, false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ParseScopes(s), true, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, true, errors.New("neither a string nor an array of strings")
	}
	return ParseScopes(strings.Join(list, " ")), true, nil
}

// numericDate parses a JWT NumericDate (seconds, possibly fractional).
func numericDate(raw json.RawMessage) (time.Time, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return time.Time{}, errors.New("not a number")
	}
	if i, err := n.Int64(); err == nil {
		return time.Unix(i, 0), nil
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, errors.New("not a number")
	}
	return time.Unix(int64(f), 0), nil
}

func checkAlgorithm(a string) error {
	switch {
	case strings.EqualFold(a, "none"):
		return errors.New(`"none" is refused: access tokens must be signed`)
	case strings.HasPrefix(strings.ToUpper(a), "HS"):
		return fmt.Errorf("%q is refused: HMAC would need a secret shared with the issuer, and lets a public key be used as the secret", a)
	case !slices.Contains(asymmetricAlgs, a):
		return fmt.Errorf("unsupported algorithm %q (want one of %s)", a, strings.Join(asymmetricAlgs, ", "))
	}
	return nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if u.Fragment != "" {
		return fmt.Errorf("%q has a fragment", s)
	}
	return nil
}

// invalid returns an error wrapping ErrInvalidToken with a reason.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// clip shortens a claim value quoted in a reason, so a hostile token cannot
// flood the logs.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func clipList(list []string) string {
	if len(list) > 4 {
		list = append(list[:4:4], "…")
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", clip(s))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func trimSlash(s string) string { return strings.TrimSuffix(s, "/") }
