package page

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/seal"
	"github.com/kobana/kadu/core/store"
)

// Approvals is what the page needs of the Confirmer (core/confirm).
//
// Approval returns store.ErrNotFound for an unknown id and for another
// organisation's. Decide records the person's choice and, when proceed is
// true, runs the operation with the stored principal; it fails with
// confirm.ErrNotRequester, confirm.ErrExpired or confirm.ErrDecided and
// changes nothing in those cases. Decide moves an approval out of pending
// atomically in the shared store: that is what makes a form single-use
// across replicas.
type Approvals interface {
	Approval(ctx context.Context, orgID, id string) (store.Approval, error)
	Decide(ctx context.Context, signedIn *auth.Principal, orgID, id string, proceed bool) (store.Approval, error)
}

// Guard is the DNS-rebinding and cross-origin check (core/origin, docs/security.md);
// *origin.Policy (core/origin) satisfies it. Check returns false when r must get 403.
type Guard interface {
	Check(r *http.Request) bool
}

// Options configures a Page. New validates them all in one place; the
// fields marked required have no default.
type Options struct {
	// PublicURL is the origin people reach the server at, e.g.
	// "https://kadu.example.com": scheme://host[:port], no path. Approval
	// links are PublicURL/approve/{id}; the sign-in returns to
	// PublicURL/approve/callback. Required.
	PublicURL string

	// Issuer is the authorization server people sign in with, compared
	// exactly with its metadata's "issuer". Its metadata is discovered at
	// /.well-known/oauth-authorization-server, then
	// /.well-known/openid-configuration. Required.
	Issuer string

	// ClientID is this page's OAuth client at Issuer, registered with the
	// redirect URI PublicURL/approve/callback and the authorization_code
	// grant. Empty: the page registers a public client itself (RFC 7591,
	// at the issuer's registration_endpoint) on the first sign-in each
	// replica serves; the sign-in cookie carries the client_id, so the
	// callback may reach any replica.
	ClientID string

	// ClientSecret, when set, authenticates ClientID at the token endpoint
	// (client_secret_basic). Empty: a public client (PKCE only).
	ClientSecret string

	// MCPURL is the public MCP URL, sent as the RFC 8707 resource so that
	// the token's audience is this server. Required.
	MCPURL string

	// Scopes are requested at sign-in. The page only needs to learn who
	// signed in. Default ["kadu.read"].
	Scopes []string

	// Verify checks the access token the sign-in returns and says who it
	// proves (core/app passes its *auth.Verifier's Verify). The token is
	// dropped when it returns. Required.
	Verify func(ctx context.Context, token string) (*auth.Principal, error)

	// Approvals reads and decides approvals. Required.
	Approvals Approvals

	// Describe says in plain words what an approval will do, in lang ("pt"
	// or "en"); core/confirm's (*Confirmer).Explain fits. Default: the
	// tool's title.
	Describe func(ctx context.Context, a store.Approval, lang string) string

	// Audit records sign-ins in the audit trail (docs/audit.md): a
	// successful one in the organisation's chain, a failed one, which
	// proves no organisation, in the installation's, within a bound
	// (audit.go). core/app passes its store. Nil: not recorded (tests).
	Audit AuditLog

	// ClientNames returns the name an OAuth client registered under, from
	// its client_id (core/devauth's ClientName for the embedded server).
	// ok false, or a nil func, shows the client_id alone.
	ClientNames func(clientID string) (name string, ok bool)

	// Guard checks Host and Origin on every request. Optional: without it
	// only the page's own check on form posts applies (same origin).
	Guard Guard

	// SealKey seals the page's cookies and form tokens: 32 bytes shared by
	// every replica, so that any of them can serve any step, and used for
	// nothing else (derive it with seal.DeriveKey). Required.
	SealKey []byte

	// Logger receives sign-ins and decisions, never a token, code or
	// cookie. Nil discards: the caller passes its logger.
	Logger *slog.Logger

	// Now is the clock. Default time.Now.
	Now func() time.Time

	// HTTPClient fetches the issuer's metadata and exchanges codes.
	// Default: a client with a 10 s timeout.
	HTTPClient *http.Client
}

// Defaults for Options.
const (
	defaultHTTPTimeout = 10 * time.Second
	sealKeyLen         = seal.KeyLen
)

func defaultScopes() []string { return []string{auth.ScopeRead} }

// withDefaults returns o with every zero optional field defaulted, or
// every problem found, joined, each naming its field.
func (o Options) withDefaults() (Options, error) {
	if len(o.Scopes) == 0 {
		o.Scopes = defaultScopes()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler) // never the process-wide default
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: defaultHTTPTimeout}
	}
	o.PublicURL = strings.TrimSuffix(o.PublicURL, "/")

	var errs []error
	if err := checkOrigin(o.PublicURL); err != nil {
		errs = append(errs, fmt.Errorf("PublicURL: %w", err))
	}
	if err := checkAbsolute(o.Issuer); err != nil {
		errs = append(errs, fmt.Errorf("Issuer: %w", err))
	}
	if err := checkAbsolute(o.MCPURL); err != nil {
		errs = append(errs, fmt.Errorf("MCPURL: %w", err))
	}
	if o.ClientID == "" && o.ClientSecret != "" {
		errs = append(errs, errors.New("ClientSecret: set without ClientID: set both, or neither to register a public client"))
	}
	if o.Verify == nil {
		errs = append(errs, errors.New("Verify: required: pass the access token verifier"))
	}
	if o.Approvals == nil {
		errs = append(errs, errors.New("Approvals: required: pass the confirmer"))
	}
	if len(o.SealKey) != sealKeyLen {
		errs = append(errs, fmt.Errorf("SealKey: want %d bytes, got %d", sealKeyLen, len(o.SealKey)))
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			errs = append(errs, fmt.Errorf("Scopes[%d]: %q is not a scope token", i, s))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("approval page options: %w", err)
	}
	return o, nil
}

// checkOrigin accepts scheme://host[:port] with no path, query or user.
func checkOrigin(s string) error {
	if err := checkAbsolute(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q: want scheme://host[:port] only, no path, query or user", s)
	}
	return nil
}

// checkAbsolute accepts an absolute http(s) URL without a fragment.
func checkAbsolute(s string) error {
	if s == "" {
		return errors.New("required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: want an http or https URL", s)
	case u.Host == "":
		return fmt.Errorf("%q: no host", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Errorf("%q: must not have a fragment", s)
	}
	return nil
}
