package devauth_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/devauth"
)

// Mount the developer authorization server and verify one of its tokens the
// way core/auth does.
func Example() {
	dir, err := os.MkdirTemp("", "kadu-devauth-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := devauth.New(devauth.Options{
		Issuer:   "http://127.0.0.1:8080",
		Resource: "http://127.0.0.1:8080/mcp",
		DataDir:  dir,
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	s.Register(e) // discovery, JWKS, /oauth/register, /oauth/authorize, /oauth/token

	tok, err := s.Mint(devauth.MintOptions{OrgID: "org_acme", Role: auth.RoleMember, Scopes: []string{auth.ScopeRead}})
	if err != nil {
		log.Fatal(err)
	}
	v := oidc.NewVerifier("http://127.0.0.1:8080", s.KeySet(), &oidc.Config{
		ClientID:             "http://127.0.0.1:8080/mcp", // the audience
		SupportedSigningAlgs: s.Algorithms(),
	})
	idt, err := v.Verify(context.Background(), tok)
	if err != nil {
		log.Fatal(err)
	}
	var claims struct {
		OrgID string `json:"org_id"`
		Role  string `json:"role"`
		Scope string `json:"scope"`
	}
	if err := idt.Claims(&claims); err != nil {
		log.Fatal(err)
	}
	fmt.Println(idt.Subject, claims.OrgID, claims.Role, claims.Scope)
	// Output: dev-user org_acme member kadu.read
}
