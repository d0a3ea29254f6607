package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ErrInsufficientScope is the reason of a step-up challenge: the token is
// valid, the role allows the operation, the scopes do not.
var ErrInsufficientScope = errors.New("insufficient scope")

// Challenge is a refused authentication or authorisation: the HTTP status
// and the WWW-Authenticate value to send (docs/reference/auth.md), and the reason, which is
// logged and never sent.
//
//   - 401, no or malformed Authorization:
//     Bearer resource_metadata="<PRM URL>", scope="kadu.read"
//   - 401, invalid token:
//     Bearer error="invalid_token", resource_metadata="<PRM URL>", scope="kadu.read"
//   - 403, step-up:
//     Bearer error="insufficient_scope", scope="<granted ∪ required, closed>", resource_metadata="<PRM URL>", error_description="<words>"
//   - 503, the issuer's keys could not be fetched: no WWW-Authenticate (the
//     token may well be fine), RetryAfter set.
//
// A Challenge is a value: build it, send it, drop it. Reason wraps one of
// ErrNoToken, ErrMalformedAuthorization, ErrInvalidToken,
// ErrKeysUnavailable or ErrInsufficientScope.
type Challenge struct {
	Status     int    // 401, 403 or 503
	Header     string // the WWW-Authenticate value; empty on 503
	RetryAfter int    // seconds; set on 503 only
	Reason     error  // logged, never sent
}

// Error describes the challenge for logs. It never contains a token.
func (c *Challenge) Error() string {
	if c.Reason == nil {
		return fmt.Sprintf("auth: %d", c.Status)
	}
	return fmt.Sprintf("auth: %d: %v", c.Status, c.Reason)
}

// Unwrap returns the reason, so errors.Is(c, ErrInvalidToken) works.
func (c *Challenge) Unwrap() error { return c.Reason }

// SetHeaders writes the challenge's headers into h: WWW-Authenticate (when
// there is one), Cache-Control: no-store, Retry-After (503 only), and adds
// WWW-Authenticate to Access-Control-Expose-Headers, keeping any names
// already exposed there (the MCP endpoint also exposes MCP-Protocol-Version).
func (c *Challenge) SetHeaders(h http.Header) {
	if c.Header != "" {
		h.Set("WWW-Authenticate", c.Header)
	}
	h.Set("Cache-Control", "no-store")
	if c.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(c.RetryAfter))
	}
	exposeHeader(h, "WWW-Authenticate")
}

// exposeHeader adds name to Access-Control-Expose-Headers unless it is
// already listed (names compare case-insensitively).
func exposeHeader(h http.Header, name string) {
	const key = "Access-Control-Expose-Headers"
	existing := h.Values(key)
	for _, v := range existing {
		for item := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(item), name) {
				return
			}
		}
	}
	if len(existing) == 0 {
		h.Set(key, name)
		return
	}
	h.Set(key, strings.Join(existing, ", ")+", "+name)
}

// quote renders s as an HTTP quoted-string (RFC 9110 §5.6.4): backslash
// and double quote are escaped, control characters dropped.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 && c != '\t', c == 0x7f:
			// dropped: a header value must not carry them
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The scope a 401 asks for: enough to list tools; a tool needing more
// steps up with a 403 later.
const challengeScope = ScopeRead

func noTokenChallenge(metadataURL string, reason error) *Challenge {
	return &Challenge{
		Status: http.StatusUnauthorized,
		Header: "Bearer resource_metadata=" + quote(metadataURL) + ", scope=" + quote(challengeScope),
		Reason: reason,
	}
}

func invalidTokenChallenge(metadataURL string, reason error) *Challenge {
	h := `Bearer error="invalid_token", resource_metadata=` + quote(metadataURL) + ", scope=" + quote(challengeScope)
	if d, ok := errors.AsType[*describedError](reason); ok {
		h += ", error_description=" + quote(descriptionText(d.desc))
	}
	return &Challenge{Status: http.StatusUnauthorized, Header: h, Reason: reason}
}

// unavailableRetryAfter is the Retry-After of a 503 challenge, in seconds.
const unavailableRetryAfter = 5

func unavailableChallenge(reason error) *Challenge {
	return &Challenge{Status: http.StatusServiceUnavailable, RetryAfter: unavailableRetryAfter, Reason: reason}
}

// stepUpChallenge asks for granted ∪ required, closed under the lattice.
func stepUpChallenge(metadataURL string, granted []string, required string) *Challenge {
	want := ParseScopes(required)
	all := CloseScopes(append(append([]string(nil), granted...), want...))
	desc := "this operation requires the " + strings.Join(want, " ") + " scope"
	if len(want) > 1 {
		desc += "s"
	}
	return &Challenge{
		Status: http.StatusForbidden,
		Header: `Bearer error="insufficient_scope", scope=` + quote(strings.Join(all, " ")) +
			", resource_metadata=" + quote(metadataURL) +
			", error_description=" + quote(descriptionText(desc)),
		Reason: fmt.Errorf("%w: requires %q", ErrInsufficientScope, required),
	}
}

// descriptionText keeps the characters RFC 6750 §3 allows in
// error_description (%x20-21 / %x23-5B / %x5D-7E), dropping the rest.
func descriptionText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}
