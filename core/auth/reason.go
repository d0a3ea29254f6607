package auth

import (
	"errors"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
)

// FailureReason classifies why a token was refused, for metrics: a value
// from a fixed set, never the error's text (which may quote claims).
//
//	issuer_unavailable  the issuer's keys could not be fetched (the token may be fine)
//	expired             exp has passed
//	not_yet_valid       nbf or iat in the future
//	audience            the token is not for this resource
//	issuer              issued by another issuer
//	signature           no key verifies the signature
//	malformed           not a compact JWS, an algorithm not allowed, empty or too long
//	token_type          an ID token, or a typ that is not an access token's
//	lifetime            longer than auth.max_token_lifetime
//	claims              sub, organisation, role, scope or client claims missing or wrong
//	invalid             anything else
//
// It matches the reasons Verifier.Verify gives (verifier.go) and go-oidc's.
func FailureReason(err error) string {
	if errors.Is(err, ErrKeysUnavailable) {
		return "issuer_unavailable"
	}
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return "expired"
	}
	msg := err.Error()
	for _, r := range reasonTexts {
		for _, t := range r.texts {
			if strings.Contains(msg, t) {
				return r.reason
			}
		}
	}
	return "invalid"
}

// reasonTexts are checked in order: the first match wins.
var reasonTexts = []struct {
	reason string
	texts  []string
}{
	// issuer first: its description quotes the token's "iss", which may
	// say anything.
	{"issuer", []string{"issued by a different provider", "not by this server's issuer"}},
	{"audience", []string{"audience"}},
	{"signature", []string{"verify signature", "verifies the signature"}},
	{"not_yet_valid", []string{"not valid before", "issued in the future", "before the nbf"}},
	{"lifetime", []string{"exceeds the cap", "expires before it was issued"}},
	{"token_type", []string{"typ", "ID-token claim"}},
	{"malformed", []string{"compact JWS", "malformed", "empty token", "token longer than", "signature", "not signed"}},
	{"claims", []string{"claim", "sub missing", "client_id", "azp"}},
}
