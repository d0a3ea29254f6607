package devauth

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kobana/kadu/core/auth"
)

// MintOptions says what a minted access token carries. Zero fields take the
// server's defaults.
type MintOptions struct {
	Subject  string        // "sub"; default Options.DefaultSubject
	OrgID    string        // "org_id"; default Options.DefaultOrg
	Role     auth.Role     // "role"; default Options.DefaultRole
	Scopes   []string      // "scope"; default every supported scope; unknown scopes are an error
	ClientID string        // "client_id"; default "kadu-cli"
	Audience string        // "aud"; default Options.Resource
	TTL      time.Duration // lifetime; default Options.AccessTokenTTL
}

// defaultMintClientID is the client_id of tokens minted without one, e.g.
// by `kadu token`.
const defaultMintClientID = "kadu-cli"

// accessClaims are the claims of an RFC 9068 access token.
type accessClaims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	OrgID    string `json:"org_id"`
	Role     string `json:"role"`
}

// Mint signs an access token with the same claims and header as the token
// endpoint's, for `kadu token` and tests. It is safe for concurrent use.
func (s *Server) Mint(opts MintOptions) (string, error) {
	if opts.Subject == "" {
		opts.Subject = s.opts.DefaultSubject
	}
	if opts.OrgID == "" {
		opts.OrgID = s.opts.DefaultOrg
	}
	if opts.Role == "" {
		opts.Role = s.opts.DefaultRole
	}
	if opts.ClientID == "" {
		opts.ClientID = defaultMintClientID
	}
	if opts.Audience == "" {
		opts.Audience = s.opts.Resource
	}
	if opts.TTL == 0 {
		opts.TTL = s.opts.AccessTokenTTL
	}
	if err := checkSubject(opts.Subject); err != nil {
		return "", fmt.Errorf("minting token: subject: %w", err)
	}
	if err := checkOrg(opts.OrgID); err != nil {
		return "", fmt.Errorf("minting token: org: %w", err)
	}
	if !opts.Role.Valid() {
		return "", fmt.Errorf("minting token: unknown role %q", opts.Role)
	}
	if opts.TTL < 0 {
		return "", fmt.Errorf("minting token: TTL must be positive, got %s", opts.TTL)
	}
	scopes, oe := parseScope(strings.Join(opts.Scopes, " "))
	if oe != nil {
		return "", fmt.Errorf("minting token: %s", oe.Description)
	}
	return s.sign(grant{
		Subject:  opts.Subject,
		OrgID:    opts.OrgID,
		Role:     opts.Role,
		Scopes:   scopes,
		ClientID: opts.ClientID,
		Audience: opts.Audience,
	}, opts.TTL)
}

// grant is what an access token is issued for.
type grant struct {
	Subject  string
	OrgID    string
	Role     auth.Role
	Scopes   []string
	ClientID string
	Audience string
}

// sign issues an access token for g that lives ttl.
func (s *Server) sign(g grant, ttl time.Duration) (string, error) {
	now := s.now()
	claims := accessClaims{
		Claims: jwt.Claims{
			Issuer:    s.opts.Issuer,
			Subject:   g.Subject,
			Audience:  jwt.Audience{g.Audience},
			Expiry:    jwt.NewNumericDate(now.Add(ttl)),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        rand.Text(),
		},
		ClientID: g.ClientID,
		Scope:    strings.Join(g.Scopes, " "),
		OrgID:    g.OrgID,
		Role:     string(g.Role),
	}
	tok, err := jwt.Signed(s.signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing access token: %w", err)
	}
	return tok, nil
}

// newSigner returns a signer that writes "typ: at+jwt" (RFC 9068 §2.1) and
// the key's kid.
func newSigner(key *jose.JSONWebKey) (jose.Signer, error) {
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: signingAlg, Key: key}, opts)
	if err != nil {
		return nil, fmt.Errorf("creating signer: %w", err)
	}
	return signer, nil
}
