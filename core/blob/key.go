package blob

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxKeyLen is S3's limit on an object key, in bytes; applied to every
// bucket so a key that works locally also works in production.
const maxKeyLen = 1024

// ErrInvalidKey is wrapped by every error about a key this package refuses.
var ErrInvalidKey = errors.New("invalid blob key")

// checkKey refuses keys that could escape the bucket's directory, be read
// differently by two back-ends, or smuggle something into a URL or a log
// line: empty keys, a leading "/", empty, "." or ".." segments (so also a
// trailing "/"), any "..", a backslash, control characters and invalid
// UTF-8. Keys are made by core/api ("<org_id>/<file_id>"), so a refusal
// here is a programming error, not a user's.
func checkKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
	}
	switch {
	case key == "":
		return fmt.Errorf("%w: key is empty", ErrInvalidKey)
	case len(key) > maxKeyLen:
		return fmt.Errorf("%w: key is %d bytes long, the limit is %d", ErrInvalidKey, len(key), maxKeyLen)
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	case strings.HasPrefix(key, "/"):
		return bad(`starts with "/"`)
	case strings.Contains(key, ".."):
		return bad(`contains ".."`)
	case strings.Contains(key, `\`):
		return bad(`contains a backslash`)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return bad("contains a control character")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("has an empty path segment")
		case ".":
			return bad(`has a "." path segment`)
		}
	}
	return nil
}

// escapeKey path-escapes each segment of a checked key, keeping the "/"
// between them, so the key reads back unchanged from a request's URL.Path.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
