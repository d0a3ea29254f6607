package devauth

import (
	"net/http"
	"net/url"
)

// authenticatedClient is a client that proved who it is at the token
// endpoint.
type authenticatedClient struct {
	*client
	ID string
}

// authenticateClient identifies and authenticates the client of a token
// request (RFC 6749 §2.3) from HTTP Basic or client_id/client_secret in the
// body. usedBasic reports whether the client tried Basic, for the 401
// challenge.
//
// A confidential client may present its secret either way, whichever
// method it registered: both are equally strong and clients differ in what
// they pick. A public client presents no secret (Basic with an empty
// password counts as none, as golang.org/x/oauth2 sends in auto-detect
// mode).
func (s *Server) authenticateClient(r *http.Request, form url.Values) (ac *authenticatedClient, usedBasic bool, oe *oauthError) {
	basicID, basicSecret, usedBasic := r.BasicAuth()
	if usedBasic {
		// RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
		if v, err := url.QueryUnescape(basicID); err == nil {
			basicID = v
		}
		if v, err := url.QueryUnescape(basicSecret); err == nil {
			basicSecret = v
		}
	}
	if len(form["client_id"]) > 1 || len(form["client_secret"]) > 1 {
		return nil, usedBasic, oerr(errInvalidRequest, "client_id or client_secret is repeated")
	}
	bodyID, bodySecret := form.Get("client_id"), form.Get("client_secret")

	id, secret := bodyID, bodySecret
	if usedBasic {
		if bodyID != "" && bodyID != basicID {
			return nil, usedBasic, oerr(errInvalidRequest, "client_id in the body differs from the one in the Authorization header")
		}
		if bodySecret != "" && basicSecret != "" {
			return nil, usedBasic, oerr(errInvalidRequest, "use one client authentication method, not both")
		}
		id = basicID
		if basicSecret != "" {
			secret = basicSecret
		}
	}
	if id == "" {
		return nil, usedBasic, oerr(errInvalidClient, "client authentication failed: no client_id")
	}
	cl, err := s.openClient(id)
	if err != nil {
		return nil, usedBasic, oerr(errInvalidClient, "client authentication failed: unknown client_id")
	}
	if cl.public() {
		if secret != "" {
			return nil, usedBasic, oerr(errInvalidClient, "client authentication failed: a public client has no secret")
		}
		return &authenticatedClient{client: cl, ID: id}, usedBasic, nil
	}
	if secret == "" || !s.checkClientSecret(id, secret) {
		return nil, usedBasic, oerr(errInvalidClient, "client authentication failed: missing or wrong client_secret")
	}
	return &authenticatedClient{client: cl, ID: id}, usedBasic, nil
}
