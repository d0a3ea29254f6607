package devauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// Bounds on a registration request.
const (
	maxRegistrationBody = 64 << 10
	maxClientNameLen    = 200
)

// registrationRequest is the part of RFC 7591 client metadata the server
// reads. Other fields are accepted and ignored.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
}

// registrationResponse is the RFC 7591 §3.2.1 response.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// handleRegister serves POST /oauth/register (RFC 7591).
func (s *Server) handleRegister(c echo.Context) error {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxRegistrationBody)
	var meta registrationRequest
	if err := json.NewDecoder(req.Body).Decode(&meta); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return writeJSONError(c, oerr(errInvalidClientMetadata, "registration request is larger than %d bytes", maxRegistrationBody), false)
		}
		return writeJSONError(c, oerr(errInvalidClientMetadata, "registration request is not valid JSON client metadata: %v", err), false)
	}

	cl, oe := newClient(meta)
	if oe == nil && cl.allows(grantCreds) && !s.clientCredentialsOn() {
		oe = errCredentialsOff(errInvalidClientMetadata)
	}
	if oe != nil {
		s.log.Info("devauth: registration refused", "error", oe.Code, "reason", oe.Description)
		return writeJSONError(c, oe, false)
	}
	cl.IssuedAt = s.now().Unix()
	id, err := s.sealer.Seal(purposeClient, cl)
	if err != nil {
		return fmt.Errorf("registering client: %w", err)
	}

	resp := registrationResponse{
		ClientID:                id,
		ClientIDIssuedAt:        cl.IssuedAt,
		ClientName:              cl.Name,
		RedirectURIs:            cl.RedirectURIs,
		GrantTypes:              cl.GrantTypes,
		ResponseTypes:           cl.responseTypes(),
		TokenEndpointAuthMethod: cl.AuthMethod,
	}
	if !cl.public() {
		never := int64(0)
		resp.ClientSecret = s.clientSecret(id)
		resp.ClientSecretExpiresAt = &never
	}
	s.log.Info("devauth: registered client", "name", cl.Name, "auth_method", cl.AuthMethod,
		"grant_types", cl.GrantTypes, "redirect_uris", cl.RedirectURIs)
	noStore(c)
	return c.JSON(http.StatusCreated, resp)
}

// newClient validates registration metadata and fills in defaults:
// token_endpoint_auth_method client_secret_basic (RFC 7591 §2), grant_types
// authorization_code and refresh_token (so clients that leave it out still
// get refresh tokens; the response says so).
func newClient(m registrationRequest) (*client, *oauthError) {
	cl := &client{AuthMethod: m.TokenEndpointAuthMethod, GrantTypes: m.GrantTypes}

	switch cl.AuthMethod {
	case "":
		cl.AuthMethod = authBasic
	case authNone, authBasic, authPost:
	default:
		return nil, oerr(errInvalidClientMetadata, "token_endpoint_auth_method %q is not supported (want none, client_secret_basic or client_secret_post)", cl.AuthMethod)
	}

	if len(cl.GrantTypes) == 0 {
		cl.GrantTypes = []string{grantCode, grantRefr}
	}
	var grants []string
	for _, g := range cl.GrantTypes {
		switch g {
		case grantCode, grantRefr, grantCreds:
		default:
			return nil, oerr(errInvalidClientMetadata, "grant type %q is not supported (want authorization_code, refresh_token or client_credentials)", g)
		}
		if !slices.Contains(grants, g) {
			grants = append(grants, g)
		}
	}
	cl.GrantTypes = grants
	if cl.allows(grantCreds) && cl.public() {
		return nil, oerr(errInvalidClientMetadata, "client_credentials needs a confidential client: use token_endpoint_auth_method client_secret_basic or client_secret_post")
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return nil, oerr(errInvalidClientMetadata, "response type %q is not supported (want code)", rt)
		}
	}
	if len(m.ResponseTypes) > 0 && !cl.allows(grantCode) {
		return nil, oerr(errInvalidClientMetadata, "response type code needs the authorization_code grant type")
	}

	if len(m.RedirectURIs) == 0 && cl.allows(grantCode) {
		return nil, oerr(errInvalidRedirectURI, "redirect_uris is required for the authorization_code grant")
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return nil, oerr(errInvalidRedirectURI, "at most %d redirect_uris, got %d", maxRedirectURIs, len(m.RedirectURIs))
	}
	for _, uri := range m.RedirectURIs {
		if err := checkRedirectURI(uri); err != nil {
			return nil, oerr(errInvalidRedirectURI, "%v", err)
		}
		if !slices.Contains(cl.RedirectURIs, uri) {
			cl.RedirectURIs = append(cl.RedirectURIs, uri)
		}
	}

	if utf8.RuneCountInString(m.ClientName) > maxClientNameLen || !utf8.ValidString(m.ClientName) {
		return nil, oerr(errInvalidClientMetadata, "client_name must be valid UTF-8 of at most %d characters", maxClientNameLen)
	}
	for _, r := range m.ClientName {
		if r < 0x20 || r == 0x7f {
			return nil, oerr(errInvalidClientMetadata, "client_name must not contain control characters")
		}
	}
	cl.Name = m.ClientName
	return cl, nil
}
