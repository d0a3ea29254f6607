package page_test

import (
	"context"
	"crypto/rand"
	"log"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/confirm/page"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/core/store"
)

// Mount the approval page beside the embedded authorization server, as
// core/app does when no issuer is configured.
func Example() {
	const origin = "http://127.0.0.1:8080"
	quiet := slog.New(slog.DiscardHandler)
	e := echo.New()

	dev, err := devauth.New(devauth.Options{Issuer: origin, Resource: origin + "/mcp", Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	dev.Register(e)
	client, err := dev.RegisterClient(devauth.ClientRegistration{
		Name:         "Kadu approval page",
		RedirectURIs: []string{origin + "/approve/callback"},
	})
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := auth.NewVerifier(auth.Options{Issuer: origin, Resource: origin + "/mcp",
		KeySet: dev.KeySet(), Algorithms: dev.Algorithms(), RequireATJWT: true})
	if err != nil {
		log.Fatal(err)
	}

	key := make([]byte, 32) // in production: the same secret on every replica
	rand.Read(key)
	p, err := page.New(page.Options{
		PublicURL:   origin,
		Issuer:      origin,
		ClientID:    client.ID,
		MCPURL:      origin + "/mcp",
		Verify:      verifier.Verify,
		Approvals:   noApprovals{}, // core/confirm's *Confirmer
		ClientNames: dev.ClientName,
		SealKey:     key,
		Logger:      quiet,
	})
	if err != nil {
		log.Fatal(err)
	}
	p.Register(e) // GET/POST /approve/:id, GET /approve/callback
	_ = p.URL("apr_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d")
}

// noApprovals stands in for the Confirmer.
type noApprovals struct{}

func (noApprovals) Approval(context.Context, string, string) (store.Approval, error) {
	return store.Approval{}, store.ErrNotFound
}

func (noApprovals) Decide(context.Context, *auth.Principal, string, string, bool) (store.Approval, error) {
	return store.Approval{}, store.ErrNotFound
}
