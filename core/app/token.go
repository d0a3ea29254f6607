package app

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/devauth"
)

// TokenOptions say what `kadu token` mints.
type TokenOptions struct {
	Subject  string
	OrgID    string
	Role     string
	Scopes   []string
	ClientID string
	TTL      time.Duration
}

// MintDevToken prints nothing and returns one access token that a server
// started with the same configuration (same data dir and public URL)
// accepts. It works only with the embedded development issuer.
func MintDevToken(cfg *config.Config, opts TokenOptions) (string, error) {
	if cfg.Auth.Issuer != "" {
		return "", errors.New("kadu token only mints tokens for the embedded development issuer; auth.issuer is set, so get a token from that issuer instead")
	}
	dev, err := newDevAuth(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), false)
	if err != nil {
		return "", err
	}
	return dev.Mint(devauth.MintOptions{
		Subject:  opts.Subject,
		OrgID:    opts.OrgID,
		Role:     auth.Role(opts.Role),
		Scopes:   opts.Scopes,
		ClientID: opts.ClientID,
		Audience: cfg.MCPURL(),
		TTL:      opts.TTL,
	})
}
