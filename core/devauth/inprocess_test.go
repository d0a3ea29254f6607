package devauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRegisterClientSignsInLikeARegisteredClient(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := env.issuer + "/approve/callback"
	cl, err := env.s.RegisterClient(ClientRegistration{Name: "Kadu approval page", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatalf("RegisterClient() error = %v", err)
	}
	if cl.Secret != "" {
		t.Errorf("public client got a secret")
	}
	if name, ok := env.s.ClientName(cl.ID); !ok || name != "Kadu approval page" {
		t.Errorf("ClientName() = %q, %v; want the registered name", name, ok)
	}

	// The consent page names it, and its code exchanges at the token endpoint.
	verifier, challenge := pkce()
	resp, page := get(t, browser(t), env.authorizeURL(cl.ID, redirect, challenge, "st", nil))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Kadu approval page wants to use Kadu") {
		t.Fatalf("consent page: status %d, want it to name the client:\n%s", resp.StatusCode, page)
	}
	code := env.approvedCode(t, cl.ID, redirect, challenge, nil)
	status, out := env.tokenRequest(t, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {cl.ID},
	}, "", "")
	if status != http.StatusOK || out["access_token"] == nil {
		t.Fatalf("token exchange: status %d, %v", status, out)
	}
}

func TestRegisterClientConfidential(t *testing.T) {
	env := newTestEnv(t, nil)
	cl, err := env.s.RegisterClient(ClientRegistration{Name: "Back office", RedirectURIs: []string{"https://app.example.com/cb"}, Confidential: true})
	if err != nil {
		t.Fatalf("RegisterClient() error = %v", err)
	}
	if cl.Secret == "" || !env.s.checkClientSecret(cl.ID, cl.Secret) {
		t.Errorf("confidential client: secret %q does not authenticate it", cl.Secret)
	}
}

func TestRegisterClientRefusesWhatRegistrationRefuses(t *testing.T) {
	env := newTestEnv(t, nil)
	for name, reg := range map[string]ClientRegistration{
		"no redirect":        {Name: "x"},
		"javascript: scheme": {Name: "x", RedirectURIs: []string{"javascript:alert(1)"}},
		"plain http abroad":  {Name: "x", RedirectURIs: []string{"http://evil.example.com/cb"}},
		"control character":  {Name: "a\x01b", RedirectURIs: []string{"https://app.example.com/cb"}},
	} {
		if _, err := env.s.RegisterClient(reg); err == nil {
			t.Errorf("%s: RegisterClient() accepted it", name)
		}
	}
}

func TestClientNameUnknownIDs(t *testing.T) {
	env := newTestEnv(t, nil)
	other := newTestEnv(t, nil)
	foreign := other.publicClient(t, "http://127.0.0.1/cb")
	for _, id := range []string{"", "kadu-cli", "not-sealed", foreign.ID} {
		if name, ok := env.s.ClientName(id); ok {
			t.Errorf("ClientName(%q) = %q, true; want false", id, name)
		}
	}
	if name, ok := other.s.ClientName(foreign.ID); !ok || name != "Test Client" {
		t.Errorf("ClientName(registered over HTTP) = %q, %v; want \"Test Client\", true", name, ok)
	}
}
