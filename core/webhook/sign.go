package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of the Standard Webhooks specification, written in lower case
// on the wire exactly as docs/files-webhooks-limits.md#webhooks spells them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// maxMsgIDLen bounds webhook-id. Kadu's are "evt_" and a UUIDv7.
const maxMsgIDLen = 255

// Sign returns the webhook-signature header value for one delivery attempt:
// "v1,<base64 HMAC-SHA256>" per secret, space-separated, in the order given
// (the current secret first, then the previous one during a rotation
// overlap). The signed content is msgID + "." + unix seconds of ts + "." +
// body, byte for byte; body must be sent exactly as passed here.
//
// msgID must be 1 to 255 printable ASCII characters without "." or spaces,
// so a receiver cannot be tricked into splitting the signed content
// differently. Errors name the secret by position, never by value.
func Sign(secrets []string, msgID string, ts time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("secrets: at least one whsec_ secret is needed to sign a delivery")
	}
	if err := checkMsgID(msgID); err != nil {
		return "", err
	}
	if ts.IsZero() {
		return "", errors.New("timestamp: must be set to the time of the attempt")
	}
	prefix := msgID + "." + formatUnix(ts) + "."

	var b strings.Builder
	b.Grow(len(secrets) * (len("v1,") + base64.StdEncoding.EncodedLen(sha256.Size) + 1))
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return "", fmt.Errorf("secrets[%d]: %w", i, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(prefix))
		mac.Write(body)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return b.String(), nil
}

func checkMsgID(id string) error {
	if id == "" || len(id) > maxMsgIDLen {
		return fmt.Errorf("msg_id: must be 1 to %d characters (the evt_ id of the event)", maxMsgIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || c == '.' {
			return fmt.Errorf("msg_id: character %d is not allowed; use printable ASCII without '.' or spaces", i)
		}
	}
	return nil
}

// formatUnix is the webhook-timestamp value: integer seconds since the epoch.
func formatUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
