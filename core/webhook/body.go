package webhook

import (
	"io"
	"strings"
	"unicode/utf8"
)

// readBody returns the start of a response body as valid UTF-8 of at most
// limit bytes, then reads up to drainBytes more so a well-behaved receiver's
// connection can be reused. The caller closes body.
func readBody(body io.Reader, limit int) string {
	data, _ := io.ReadAll(io.LimitReader(body, int64(limit)+1))
	if len(data) > limit {
		data = dropPartialRune(data[:limit])
		_, _ = io.Copy(io.Discard, io.LimitReader(body, drainBytes))
	}
	return truncateUTF8(strings.ToValidUTF8(string(data), "\uFFFD"), limit)
}

// dropPartialRune removes a multi-byte character cut in half at the end of
// b, so truncation does not leave a replacement character behind.
func dropPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// truncateUTF8 cuts valid UTF-8 s to at most limit bytes on a character
// boundary. Replacing invalid bytes can make a string longer than what was
// read, hence the second cut.
func truncateUTF8(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
