package devauth

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OAuth error codes (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2,
// RFC 8707 §2).
const (
	errInvalidRequest          = "invalid_request"
	errInvalidClient           = "invalid_client"
	errInvalidGrant            = "invalid_grant"
	errUnauthorizedClient      = "unauthorized_client"
	errUnsupportedGrantType    = "unsupported_grant_type"
	errUnsupportedResponseType = "unsupported_response_type"
	errInvalidScope            = "invalid_scope"
	errInvalidTarget           = "invalid_target"
	errAccessDenied            = "access_denied"
	errConsentRequired         = "consent_required" // OIDC Core §3.1.2.6
	errServerError             = "server_error"
	errInvalidRedirectURI      = "invalid_redirect_uri"
	errInvalidClientMetadata   = "invalid_client_metadata"
)

// oauthError is an OAuth error response: a code from the list above and a
// description naming the problem, safe to show the client.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

// Is matches any *oauthError with the same Code.
func (e *oauthError) Is(target error) bool {
	t, ok := target.(*oauthError)
	return ok && t.Code == e.Code
}

func oerr(code, format string, args ...any) *oauthError {
	return &oauthError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// writeJSONError renders e as RFC 6749 §5.2 JSON: 401 with a Basic
// challenge for invalid_client when the client tried Basic authentication,
// 500 for server_error, 400 otherwise.
func writeJSONError(c echo.Context, e *oauthError, usedBasic bool) error {
	status := http.StatusBadRequest
	switch e.Code {
	case errInvalidClient:
		status = http.StatusUnauthorized
		if usedBasic {
			c.Response().Header().Set("WWW-Authenticate", `Basic realm="kadu-devauth"`)
		}
	case errServerError:
		status = http.StatusInternalServerError
	}
	noStore(c)
	return c.JSON(status, e)
}

// noStore marks a response as never cacheable (RFC 6749 §5.1).
func noStore(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}
