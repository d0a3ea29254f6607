package devauth

import (
	"net/http"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// serverMetadata is both the RFC 8414 authorization server metadata and the
// OpenID Connect discovery document: the fields they share are the same,
// and the OIDC-only ones do no harm to OAuth clients.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
}

func (s *Server) metadata() serverMetadata {
	return serverMetadata{
		Issuer:                            s.opts.Issuer,
		AuthorizationEndpoint:             s.endpoint(pathAuthorize),
		TokenEndpoint:                     s.endpoint(pathToken),
		RegistrationEndpoint:              s.endpoint(pathRegister),
		JWKSURI:                           s.endpoint(pathJWKS),
		ScopesSupported:                   auth.SupportedScopes(),
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               s.grantTypes(),
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: []string{authNone, authBasic, authPost},
		AuthorizationResponseIssSupported: true,
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  s.Algorithms(),
	}
}

// handleMetadata serves both discovery documents.
func (s *Server) handleMetadata(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, s.metadata())
}

// handleJWKS serves the public signing key.
func (s *Server) handleJWKS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{s.pubKey}})
}
