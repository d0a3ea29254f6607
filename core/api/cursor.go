package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// Cursors are opaque to clients: a payload (the last id seen and a digest
// of the listing's filters) and an HMAC over it. A forged cursor, or one
// reused with other filters, is 400 invalid_cursor (docs/reference/rest.md#conventions).
type cursors struct {
	key []byte // fixed at creation
}

type cursorPayload struct {
	After   string `json:"a"` // keyset: the last id of the previous page
	Filters string `json:"f"` // digest of route + filters
}

func (c cursors) encode(after, filters string) string {
	p, _ := json.Marshal(cursorPayload{After: after, Filters: filterDigest(filters)})
	mac := hmac.New(sha256.New, c.key)
	mac.Write(p)
	return base64.RawURLEncoding.EncodeToString(p) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// decode returns the id to continue after, or an invalid_cursor error.
func (c cursors) decode(cursor, filters string) (string, error) {
	bad := paramProblem(http.StatusBadRequest, "invalid_cursor", "cursor",
		"The cursor is not valid for this listing.",
		"Use meta.next_cursor exactly as returned, with the same filters; or start again without a cursor.")
	payload, sig, ok := strings.Cut(cursor, ".")
	p, err1 := base64.RawURLEncoding.DecodeString(payload)
	s, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil {
		return "", bad
	}
	mac := hmac.New(sha256.New, c.key)
	mac.Write(p)
	if !hmac.Equal(s, mac.Sum(nil)[:16]) {
		return "", bad
	}
	var cp cursorPayload
	if json.Unmarshal(p, &cp) != nil || cp.Filters != filterDigest(filters) || cp.After == "" {
		return "", bad
	}
	return cp.After, nil
}

func filterDigest(filters string) string {
	sum := sha256.Sum256([]byte(filters))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}
