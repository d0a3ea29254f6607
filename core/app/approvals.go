package app

import (
	"fmt"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/confirm/page"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/core/origin"
)

// mountApprovalPage serves /approve/…, where a person approves a
// destructive call from a client that could not ask in the chat (docs/reference/confirmation.md).
// With the embedded issuer the page registers its own OAuth client
// in-process; with auth.issuer it uses confirm.client_id, or registers
// itself by dynamic client registration.
func (a *App) mountApprovalPage(v *auth.Verifier, origins *origin.Policy) (*page.Page, error) {
	cfg := a.cfg
	opts := page.Options{
		PublicURL:    cfg.PublicOrigin(),
		Issuer:       cfg.IssuerURL(),
		ClientID:     cfg.Confirm.ClientID,
		ClientSecret: cfg.Confirm.ClientSecret.Reveal(),
		MCPURL:       cfg.MCPURL(),
		Verify:       v.Verify,
		Approvals:    a.confirm,
		Describe:     a.confirm.Explain,
		Guard:        origins,
		Audit:        a.backend.db,
		SealKey:      a.backend.keys.approvalPage,
		Logger:       a.log,
	}
	if a.dev != nil {
		opts.ClientNames = a.dev.ClientName
		if opts.ClientID == "" {
			cl, err := a.dev.RegisterClient(devauth.ClientRegistration{
				Name:         "Kadu approval page",
				RedirectURIs: []string{cfg.PublicOrigin() + "/approve/callback"},
			})
			if err != nil {
				return nil, fmt.Errorf("approval page: %w", err)
			}
			opts.ClientID = cl.ID
		}
	}
	p, err := page.New(opts)
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	p.Register(a.public)
	return p, nil
}
