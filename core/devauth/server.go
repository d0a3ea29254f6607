package devauth

import (
	"crypto"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/seal"
)

// Routes, relative to the root of the echo instance and to Options.Issuer.
const (
	pathASMetadata   = "/.well-known/oauth-authorization-server"
	pathOIDCMetadata = "/.well-known/openid-configuration"
	pathJWKS         = "/oauth/jwks"
	pathRegister     = "/oauth/register"
	pathAuthorize    = "/oauth/authorize"
	pathToken        = "/oauth/token"
)

// Lifetimes and bounds of the server's own artefacts.
const (
	codeTTL    = 60 * time.Second // authorization codes
	consentTTL = 15 * time.Minute // consent form tokens
	maxSeen    = 10000            // ids remembered per seenSet
)

// Server is the developer authorization server.
//
// A Server is safe for concurrent use. It holds no open resources and needs
// no Close. What it remembers in memory (used codes, rotated refresh tokens)
// is lost on restart; authorization codes are sealed with a per-process key,
// so none survives a restart either. The zero value is not usable: use New.
type Server struct {
	// fixed at creation
	opts      Options
	log       *slog.Logger
	now       func() time.Time
	pubKey    jose.JSONWebKey // public half of signKey
	signer    jose.Signer
	sealer    *seal.Ring // persisted key: client ids, refresh tokens, consent forms
	codes     *seal.Ring // per-process key: authorization codes
	secretKey []byte     // persisted: derives client secrets
	pages     *pages

	usedCodes       *seenSet // code ids already exchanged
	usedRefresh     *seenSet // refresh token ids already rotated
	revokedFamilies *seenSet // refresh token families cut off after a replay
}

// New loads the keys under opts.DataDir, creating them on first start, and
// returns a Server ready to Register.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	k, err := loadOrCreateKeys(opts.DataDir, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	signer, err := newSigner(k.signing)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	sealKey, err := seal.DeriveKey(k.master, infoSealKey)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	secretKey, err := seal.DeriveKey(k.master, infoSecretKey)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	sl, err := seal.New(maxSealedLen, sealKey)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	codes, err := seal.NewRandom(maxSealedLen)
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	pg, err := newPages()
	if err != nil {
		return nil, fmt.Errorf("devauth: %w", err)
	}
	if opts.AutoApprove {
		opts.Logger.Warn("devauth: AutoApprove is on: every authorization request is approved without consent")
	}
	return &Server{
		opts:            opts,
		log:             opts.Logger,
		now:             opts.Now,
		pubKey:          k.signing.Public(),
		signer:          signer,
		sealer:          sl,
		codes:           codes,
		secretKey:       secretKey,
		pages:           pg,
		usedCodes:       newSeenSet(maxSeen),
		usedRefresh:     newSeenSet(maxSeen),
		revokedFamilies: newSeenSet(maxSeen),
	}, nil
}

// Register mounts every route on the root of e: discovery metadata, JWKS,
// registration, authorization and token endpoints, with CORS preflights
// for the ones browsers call from other origins.
func (s *Server) Register(e *echo.Echo) {
	cors := []struct {
		path    string
		method  string
		handler echo.HandlerFunc
	}{
		{pathASMetadata, http.MethodGet, s.handleMetadata},
		{pathOIDCMetadata, http.MethodGet, s.handleMetadata},
		{pathJWKS, http.MethodGet, s.handleJWKS},
		{pathRegister, http.MethodPost, s.handleRegister},
		{pathToken, http.MethodPost, s.handleToken},
	}
	for _, r := range cors {
		e.Add(r.method, r.path, withCORS(r.handler))
		e.OPTIONS(r.path, preflight(r.method))
	}
	e.GET(pathAuthorize, s.handleAuthorize)
	e.POST(pathAuthorize, s.handleConsent)
}

// KeySet returns the server's public signing key as an in-process key set
// for the access token verifier. It never fetches anything.
func (s *Server) KeySet() oidc.KeySet {
	return &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{s.pubKey.Key}}
}

// Algorithms returns the JWS algorithms the server signs with, for the
// verifier's pinned list.
func (s *Server) Algorithms() []string { return []string{string(signingAlg)} }

// endpoint returns the public URL of path.
func (s *Server) endpoint(path string) string { return s.opts.Issuer + path }
