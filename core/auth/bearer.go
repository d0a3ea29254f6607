package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Reasons for a 401 without error="invalid_token": there is no bearer token
// to verify.
var (
	// ErrNoToken: no Authorization header, or an empty one.
	ErrNoToken = errors.New("no bearer token")
	// ErrMalformedAuthorization: an Authorization header that is not exactly
	// one "Bearer <token68>" (another scheme, several headers, bad syntax).
	ErrMalformedAuthorization = errors.New("malformed Authorization header")
)

// bearerToken extracts the token from the request's Authorization header
// (RFC 6750 §2.1, RFC 9110 §11.4): exactly one header, the scheme "Bearer"
// in any case, one or more spaces, then a token68. Surrounding spaces and
// tabs are ignored. Errors never quote the header: it may hold a token.
func bearerToken(h http.Header) (string, error) {
	values := h.Values("Authorization")
	switch len(values) {
	case 0:
		return "", ErrNoToken
	case 1:
	default:
		return "", fmt.Errorf("%w: %d Authorization headers", ErrMalformedAuthorization, len(values))
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", ErrNoToken
	}
	scheme, rest, ok := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", fmt.Errorf("%w: the scheme is not Bearer", ErrMalformedAuthorization)
	}
	if !ok {
		return "", fmt.Errorf("%w: Bearer without a token", ErrMalformedAuthorization)
	}
	token := strings.TrimLeft(rest, " ")
	if !isToken68(token) {
		return "", fmt.Errorf("%w: the credentials are not a token68", ErrMalformedAuthorization)
	}
	return token, nil
}

// isToken68 reports whether s matches RFC 9110's
// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/':
		default:
			return false
		}
	}
	return true
}
