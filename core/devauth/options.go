package devauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
)

// Options configures a Server. Every field but Issuer and Resource has a
// default; New validates them all in one place.
type Options struct {
	// Issuer is the public base URL of this server, e.g.
	// "http://127.0.0.1:8080": scheme and host, no path, no trailing slash.
	// It is the "iss" of every token and the base of every advertised
	// endpoint. Required.
	Issuer string

	// Resource is the public MCP URL, e.g. "http://127.0.0.1:8080/mcp". It is
	// the audience of every token issued through the endpoints: a request's
	// "resource" parameter must name it (a trailing slash is ignored).
	// Required.
	Resource string

	// ResourceAliases are other URLs of the same MCP endpoint a client may
	// use, e.g. "http://localhost:8080/mcp" beside "http://127.0.0.1:8080/mcp":
	// a request naming one gets tokens for that one. Optional.
	ResourceAliases []string

	// DataDir holds DataDir/devauth/signing-key.json and
	// DataDir/devauth/sealing-key.json (files 0600, directory 0700), so that
	// tokens, registered clients and refresh tokens survive restarts. Empty
	// means keys live in memory only and die with the process.
	DataDir string

	// DefaultOrg is the organisation offered on the consent page and used by
	// AutoApprove, client_credentials and Mint. Default "org_dev".
	DefaultOrg string

	// DefaultRole is the role offered on the consent page and used by
	// AutoApprove and Mint. Default auth.RoleOwner.
	DefaultRole auth.Role

	// ClientCredentialsRole turns the client_credentials grant on: a
	// confidential client, which anyone who reaches the server can register,
	// gets tokens for DefaultOrg with this role and no person's consent.
	// Empty (default): the grant is off; registering a client for it is
	// invalid_client_metadata and the token endpoint answers
	// unsupported_grant_type. See RATIONALE.md.
	ClientCredentialsRole auth.Role

	// DefaultSubject is the user offered on the consent page and used by
	// AutoApprove and Mint. Default "dev-user".
	DefaultSubject string

	// AccessTokenTTL is the lifetime of access tokens. Default 1h.
	AccessTokenTTL time.Duration

	// RefreshTokenTTL is the lifetime of each refresh token; a rotated
	// token gets a fresh one. Default 30 days.
	RefreshTokenTTL time.Duration

	// AutoApprove makes GET /oauth/authorize approve at once with the
	// defaults, without a consent page. For tests only: never set it from
	// configuration.
	AutoApprove bool

	// Logger receives registrations, approvals and grants (never a token,
	// code or secret). Nil discards: the caller passes its logger.
	Logger *slog.Logger

	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Defaults for Options.
const (
	defaultOrg             = "org_dev"
	defaultSubject         = "dev-user"
	defaultAccessTokenTTL  = time.Hour
	defaultRefreshTokenTTL = 30 * 24 * time.Hour
)

// withDefaults returns o with every zero field defaulted, or every problem
// found, joined.
func (o Options) withDefaults() (Options, error) {
	if o.DefaultOrg == "" {
		o.DefaultOrg = defaultOrg
	}
	if o.DefaultRole == "" {
		o.DefaultRole = auth.RoleOwner
	}
	if o.DefaultSubject == "" {
		o.DefaultSubject = defaultSubject
	}
	if o.AccessTokenTTL == 0 {
		o.AccessTokenTTL = defaultAccessTokenTTL
	}
	if o.RefreshTokenTTL == 0 {
		o.RefreshTokenTTL = defaultRefreshTokenTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler) // never the process-wide default
	}
	if o.Now == nil {
		o.Now = time.Now
	}

	var errs []error
	if err := checkIssuer(o.Issuer); err != nil {
		errs = append(errs, fmt.Errorf("Issuer: %w", err))
	}
	if err := checkResource(o.Resource); err != nil {
		errs = append(errs, fmt.Errorf("Resource: %w", err))
	}
	for i, r := range o.ResourceAliases {
		if err := checkResource(r); err != nil {
			errs = append(errs, fmt.Errorf("ResourceAliases[%d]: %w", i, err))
		}
	}
	if err := checkOrg(o.DefaultOrg); err != nil {
		errs = append(errs, fmt.Errorf("DefaultOrg: %w", err))
	}
	if !o.DefaultRole.Valid() {
		errs = append(errs, fmt.Errorf("DefaultRole: unknown role %q", o.DefaultRole))
	}
	if o.ClientCredentialsRole != "" && !o.ClientCredentialsRole.Valid() {
		errs = append(errs, fmt.Errorf("ClientCredentialsRole: unknown role %q", o.ClientCredentialsRole))
	}
	if err := checkSubject(o.DefaultSubject); err != nil {
		errs = append(errs, fmt.Errorf("DefaultSubject: %w", err))
	}
	if o.AccessTokenTTL < 0 {
		errs = append(errs, fmt.Errorf("AccessTokenTTL: must be positive, got %s", o.AccessTokenTTL))
	}
	if o.RefreshTokenTTL < 0 {
		errs = append(errs, fmt.Errorf("RefreshTokenTTL: must be positive, got %s", o.RefreshTokenTTL))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("devauth options: %w", err)
	}
	return o, nil
}

func checkIssuer(s string) error {
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
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(s, "/"):
		return fmt.Errorf("%q: want scheme://host[:port] only, no path, query, user or trailing slash", s)
	}
	return nil
}

func checkResource(s string) error {
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

// maxSubjectLen limits the subject chosen on the consent page.
const maxSubjectLen = 128

// checkOrg applies the one organisation id rule (auth.CheckOrgID) to the
// consent page, Mint and DefaultOrg, so the embedded issuer never signs an
// id the verifier would refuse.
func checkOrg(s string) error { return auth.CheckOrgID(s) }

// checkSubject accepts any printable text without leading or trailing
// space, e.g. "dev-user" or "alice@example.com".
func checkSubject(s string) error {
	if s == "" || len(s) > maxSubjectLen {
		return fmt.Errorf("want 1 to %d characters", maxSubjectLen)
	}
	if strings.TrimSpace(s) != s {
		return fmt.Errorf("%q: no leading or trailing space", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return fmt.Errorf("%q: no control characters", s)
		}
	}
	return nil
}
