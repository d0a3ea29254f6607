package devauth

import (
	"errors"
	"fmt"
)

// ClientRegistration is what RegisterClient registers: the same metadata a
// client sends to POST /oauth/register, for a client that lives in this
// process (the approval page signing people in).
type ClientRegistration struct {
	Name         string   // shown on the consent page and by ClientName
	RedirectURIs []string // checked as at /oauth/register; at least one
	// Confidential registers a client_secret_basic client and returns its
	// secret. False registers a public client (PKCE, no secret).
	Confidential bool
}

// RegisteredClient is a client RegisterClient created.
type RegisteredClient struct {
	ID     string // the client_id, valid for as long as the sealing key
	Secret string // "" for a public client; never log it
}

// RegisterClient registers a client for the authorization_code and
// refresh_token grants without an HTTP round trip, with the same checks as
// POST /oauth/register. Like any registration it needs no store: the
// client is sealed into its id. It is safe for concurrent use.
func (s *Server) RegisterClient(reg ClientRegistration) (RegisteredClient, error) {
	if len(reg.RedirectURIs) == 0 {
		return RegisteredClient{}, errors.New("devauth: registering client: RedirectURIs: need at least one redirect URI")
	}
	method := authNone
	if reg.Confidential {
		method = authBasic
	}
	cl, oe := newClient(registrationRequest{
		RedirectURIs:            reg.RedirectURIs,
		TokenEndpointAuthMethod: method,
		GrantTypes:              []string{grantCode, grantRefr},
		ClientName:              reg.Name,
	})
	if oe != nil {
		return RegisteredClient{}, fmt.Errorf("devauth: registering client %q: %s", reg.Name, oe.Description)
	}
	cl.IssuedAt = s.now().Unix()
	id, err := s.sealer.Seal(purposeClient, cl)
	if err != nil {
		return RegisteredClient{}, fmt.Errorf("devauth: registering client %q: %w", reg.Name, err)
	}
	out := RegisteredClient{ID: id}
	if reg.Confidential {
		out.Secret = s.clientSecret(id)
	}
	s.log.Info("devauth: registered client in process", "name", cl.Name, "auth_method", cl.AuthMethod,
		"redirect_uris", cl.RedirectURIs)
	return out, nil
}

// ClientName returns the client_name a client registered with, read from
// its client_id. ok is false when clientID was not issued by this server
// (a minted token's "kadu-cli", another server's id, a forgery); name is
// "" with ok true when the client registered without a name. It is safe for
// concurrent use.
func (s *Server) ClientName(clientID string) (name string, ok bool) {
	cl, err := s.openClient(clientID)
	if err != nil {
		return "", false
	}
	return cl.Name, true
}
