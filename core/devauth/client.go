package devauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
)

// Token endpoint authentication methods (RFC 7591 §2).
const (
	authNone   = "none"
	authBasic  = "client_secret_basic"
	authPost   = "client_secret_post"
	grantCode  = "authorization_code"
	grantRefr  = "refresh_token"
	grantCreds = "client_credentials"
)

// client is a registered client. It is sealed into its own client_id, so
// registrations need no store and survive restarts for as long as the
// sealing key does.
type client struct {
	RedirectURIs []string `json:"r,omitempty"`
	Name         string   `json:"n,omitempty"`
	AuthMethod   string   `json:"m"`
	GrantTypes   []string `json:"g"`
	IssuedAt     int64    `json:"t"`
}

func (c *client) public() bool { return c.AuthMethod == authNone }

func (c *client) allows(grant string) bool { return slices.Contains(c.GrantTypes, grant) }

// responseTypes is what the client may ask of the authorization endpoint.
func (c *client) responseTypes() []string {
	if c.allows(grantCode) {
		return []string{"code"}
	}
	return []string{}
}

// redirectFor returns the redirect URI to use for an authorization request
// that asked for requested ("" when the request named none), and whether it
// is registered. A request may leave it out only when exactly one URI is
// registered (RFC 6749 §3.1.2.3).
func (c *client) redirectFor(requested string) (string, bool) {
	if requested == "" {
		if len(c.RedirectURIs) == 1 {
			return c.RedirectURIs[0], true
		}
		return "", false
	}
	for _, r := range c.RedirectURIs {
		if matchRedirectURI(r, requested) {
			return requested, true
		}
	}
	return "", false
}

// clientSecret derives the secret of a confidential client from its id: a
// keyed hash, so it needs no store and only this server can compute it.
func (s *Server) clientSecret(clientID string) string {
	m := hmac.New(sha256.New, s.secretKey)
	m.Write([]byte(clientID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkClientSecret reports whether secret is clientID's, in constant time.
func (s *Server) checkClientSecret(clientID, secret string) bool {
	want := s.clientSecret(clientID)
	return subtle.ConstantTimeCompare([]byte(want), []byte(secret)) == 1
}

// openClient returns the client sealed in clientID.
func (s *Server) openClient(clientID string) (*client, error) {
	var c client
	if err := s.sealer.Open(purposeClient, clientID, &c, s.now()); err != nil {
		return nil, err
	}
	return &c, nil
}

// clientHash identifies a client inside codes and refresh tokens without
// carrying its (long) id.
func clientHash(clientID string) string {
	h := sha256.Sum256([]byte(clientID))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}

// clientCredentialsOn reports whether the client_credentials grant is on
// (Options.ClientCredentialsRole).
func (s *Server) clientCredentialsOn() bool { return s.opts.ClientCredentialsRole != "" }

// grantTypes are the grant types the server advertises and accepts.
func (s *Server) grantTypes() []string {
	if s.clientCredentialsOn() {
		return []string{grantCode, grantRefr, grantCreds}
	}
	return []string{grantCode, grantRefr}
}

// errCredentialsOff refuses the client_credentials grant while it is off,
// with code invalid_client_metadata at registration (RFC 7591 §3.2.2) and
// unsupported_grant_type at the token endpoint (RFC 6749 §5.2); both say
// what turns it on.
func errCredentialsOff(code string) *oauthError {
	return oerr(code, "the client_credentials grant is off on this development server: "+
		"sign in with authorization_code, or set auth.dev.client_credentials_role to the role its tokens should carry")
}
