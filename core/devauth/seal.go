package devauth

import "time"

// Purposes a sealed value is bound to (the additional data of core/seal),
// so a value sealed for one use never opens as another: a refresh token is
// not a code, a consent form token is not a client_id. They are part of
// the format of client_ids and refresh tokens that clients keep: changing
// one signs every client out.
const (
	purposeClient  = "client"
	purposeCode    = "code"
	purposeRefresh = "refresh"
	purposeConsent = "consent"
)

// maxSealedLen bounds what the server will open. The largest sealed value
// is a consent form token carrying a client_id; both are bounded by the
// registration limits.
const maxSealedLen = 16 << 10

// Info strings of the keys derived from the persisted master key
// (seal.DeriveKey). Like the purposes, they are part of the format of what
// clients keep.
const (
	infoSealKey   = "kadu devauth v1 seal"
	infoSecretKey = "kadu devauth v1 client secret"
)

// Exp is the last second a sealed value is valid in, so it expires at the
// next one (core/seal refuses it from then on). A client has no expiry.
func (f *consentForm) ExpiresAt() time.Time   { return lastSecond(f.Exp) }
func (c *codeClaims) ExpiresAt() time.Time    { return lastSecond(c.Exp) }
func (r *refreshClaims) ExpiresAt() time.Time { return lastSecond(r.Exp) }

func lastSecond(exp int64) time.Time { return time.Unix(exp+1, 0) }
