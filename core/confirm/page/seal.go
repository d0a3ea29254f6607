package page

import (
	"crypto/rand"
	"time"
)

// Purposes a sealed value is bound to (the additional data of
// core/seal), so a value sealed for one use never opens as another: a form
// token is not a session.
const (
	purposeSession = "kadu/approval-page/session"
	purposeSignIn  = "kadu/approval-page/signin"
	purposeForm    = "kadu/approval-page/form"
)

// maxSealedLen bounds what the page will open: the largest sealed value is
// a session of a long subject.
const maxSealedLen = 4 << 10

// The page's Exp is the last second a value is valid in (a session of 15
// minutes still serves its approval at its 15th minute, as the approval
// does), so it expires at the next one.
func (s *session) ExpiresAt() time.Time   { return lastSecond(s.Exp) }
func (s *signIn) ExpiresAt() time.Time    { return lastSecond(s.Exp) }
func (f *formToken) ExpiresAt() time.Time { return lastSecond(f.Exp) }

func lastSecond(exp int64) time.Time { return time.Unix(exp+1, 0) }

// randomText returns 26 characters of crypto/rand base32 (130 bits), valid
// as OAuth state and as PKCE verifier material.
func randomText() string { return rand.Text() }
