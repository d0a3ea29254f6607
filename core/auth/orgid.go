package auth

import (
	"errors"
	"fmt"
)

// MaxOrgIDLen is the longest organisation id Kadu accepts, in bytes.
const MaxOrgIDLen = 64

// OrgIDRule says in words what CheckOrgID accepts, for error messages and
// docs.
const OrgIDRule = `1 to 64 ASCII letters, digits, "_" and "-", starting with a letter or digit (e.g. "org_dev", "acme-1")`

// ErrInvalidOrgID is wrapped by every error CheckOrgID returns.
var ErrInvalidOrgID = errors.New("invalid organisation id")

// CheckOrgID is the one rule for organisation ids, wherever they enter:
// the organisation claim of a verified token, the embedded issuer's consent
// page, client_credentials and Mint, `kadu token --org`, and
// auth.dev.default_org. An id is 1 to 64 ASCII letters, digits, "_" and
// "-", starting with a letter or digit: ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$.
//
// Why so narrow: the id becomes the first segment of every blob key
// ("<org_id>/<file_id>"), a label in logs and metrics, and part of cache
// and rate-limit keys. Without "/", ".", ":" or spaces it can never be
// read as a path ("a..b", "../x"), split a key, or smuggle a separator, so
// no consumer needs its own escaping. Ids such as "org_dev", UUIDs and the
// organisation ids of common identity providers fit.
func CheckOrgID(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty; want %s", ErrInvalidOrgID, OrgIDRule)
	}
	if len(s) > MaxOrgIDLen {
		return fmt.Errorf("%w: %d bytes long; want %s", ErrInvalidOrgID, len(s), OrgIDRule)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("%w: %q; want %s", ErrInvalidOrgID, clip(s), OrgIDRule)
		}
	}
	return nil
}

// describedError is a token refusal whose reason is safe and useful to
// show the caller (it names a claim and a rule, never the token): the 401
// carries desc as error_description and as the body's detail, and hint as
// the body's hint. Other refusals stay terse.
type describedError struct {
	desc, hint string
	err        error // for logs
}

func (e *describedError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrInvalidToken, e.desc, e.err)
}

// Unwrap makes errors.Is(err, ErrInvalidToken) hold, and reaches the
// underlying rule error.
func (e *describedError) Unwrap() []error { return []error{ErrInvalidToken, e.err} }
