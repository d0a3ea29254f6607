package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// discoverJWKSURL finds the issuer's "jwks_uri" in its metadata. It tries,
// in order, the OpenID Connect location (issuer + /.well-known/openid-configuration),
// then RFC 8414's (/.well-known/oauth-authorization-server inserted before
// the issuer's path) and, for an issuer with a path, OpenID Connect's
// inserted form. The document's "issuer" must equal the configured issuer
// exactly (RFC 8414 §3.3), or it is skipped.
func discoverJWKSURL(ctx context.Context, client *http.Client, issuer string) (string, error) {
	var errs []error
	for _, u := range discoveryURLs(issuer) {
		body, err := getBody(ctx, client, u, "application/json")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &meta); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u, err))
			continue
		}
		if meta.Issuer != issuer {
			errs = append(errs, fmt.Errorf("%s: issuer %q, want %q", u, clip(meta.Issuer), issuer))
			continue
		}
		if err := checkHTTPURL(meta.JWKSURI); err != nil {
			errs = append(errs, fmt.Errorf("%s: jwks_uri: %w", u, err))
			continue
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("discovering the JWKS of %s: %w", issuer, errors.Join(errs...))
}

func discoveryURLs(issuer string) []string {
	trimmed := trimSlash(issuer)
	u, err := url.Parse(trimmed)
	if err != nil || u.Path == "" {
		return []string{
			trimmed + "/.well-known/openid-configuration",
			trimmed + "/.well-known/oauth-authorization-server",
		}
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return []string{
		trimmed + "/.well-known/openid-configuration",
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
	}
}
