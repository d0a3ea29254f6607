package page

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// clientName is how the page names itself when it registers.
const clientName = "Kadu approval page"

// maxRegistrationBody bounds the issuer's registration response.
const maxRegistrationBody = 64 << 10

// registrar holds the client this replica registered when Options.ClientID
// is empty. It is safe for concurrent use; a failed registration is not
// cached, so the next sign-in tries again.
type registrar struct {
	mu sync.Mutex // serialises registrations; guards id
	id string
}

// clientID returns the client the page signs people in with: the
// configured one, or the one this replica registered (registering it now
// if need be).
func (p *Page) clientID(ctx context.Context) (string, error) {
	if p.opts.ClientID != "" {
		return p.opts.ClientID, nil
	}
	p.reg.mu.Lock()
	defer p.reg.mu.Unlock()
	if p.reg.id != "" {
		return p.reg.id, nil
	}
	ep, err := p.endpoints.get(ctx)
	if err != nil {
		return "", err
	}
	if ep.Registration == "" {
		return "", errors.New("the issuer offers no dynamic client registration (no registration_endpoint): " +
			"register a client with redirect URI " + p.redirectURI() + " and configure its client_id")
	}
	id, err := p.register(ctx, ep.Registration)
	if err != nil {
		return "", err
	}
	p.reg.id = id
	p.log.Info("approval page: registered as an OAuth client of the issuer", "issuer", p.opts.Issuer,
		"redirect_uri", p.redirectURI())
	return id, nil
}

// register registers a public client (RFC 7591) at endpoint.
func (p *Page) register(ctx context.Context, endpoint string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"client_name":                clientName,
		"redirect_uris":              []string{p.redirectURI()},
		"grant_types":                []string{"authorization_code"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"scope":                      joinScopes(p.opts.Scopes),
	})
	if err != nil {
		return "", fmt.Errorf("registering the page: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("registering the page: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := p.opts.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("registering the page: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistrationBody))
	if err != nil {
		return "", fmt.Errorf("registering the page: %w", err)
	}
	var out struct {
		ClientID string `json:"client_id"`
		Error    string `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("registering the page at %s: status %d %s", endpoint, resp.StatusCode, oauthCode(out.Error))
	}
	if out.ClientID == "" {
		return "", fmt.Errorf("registering the page at %s: the answer has no client_id", endpoint)
	}
	return out.ClientID, nil
}
