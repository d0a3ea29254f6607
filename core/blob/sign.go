package blob

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// MinSigningKeyLen is the shortest Options.SigningKey Open accepts, in bytes.
const MinSigningKeyLen = 32

// Query parameters of a local signed URL. Every one of them except
// signature is covered by the signature.
const (
	paramMethod      = "method"
	paramExpires     = "expires"
	paramContentType = "content_type"
	paramSize        = "size"
	paramFilename    = "filename"
	paramSignature   = "signature"
)

// signedURLVersion separates these MACs from anything else a shared key
// might ever sign, and lets the format change without ambiguity.
const signedURLVersion = "kadu-blob-url-v1"

// sigLen is the length of an HMAC-SHA256 in unpadded base64url.
const sigLen = 43

// grant is what one local signed URL allows: one method on one key until
// expires, with the exact content type and size of an upload, or the
// attachment filename of a download.
type grant struct {
	method      string    // http.MethodPut or http.MethodGet
	key         string    // checked by checkKey
	expires     time.Time // whole seconds; the URL is refused from this instant on
	contentType string    // PUT only
	size        int64     // PUT only
	filename    string    // GET only
}

// errBadSignature covers every way a URL can fail verification: a missing
// or malformed parameter, a bad key, a wrong signature. The handler does not
// say which, so a forger learns nothing from the answer.
var errBadSignature = errors.New("signature missing, malformed or wrong")

// signer computes and checks the MAC of local signed URLs. It is safe for
// concurrent use; it keeps a pool of keyed hashes because building one
// costs two SHA-256 blocks and an allocation per request.
type signer struct {
	macs sync.Pool // of hash.Hash, all keyed with the same key
}

func newSigner(key []byte) *signer {
	k := append([]byte(nil), key...) // the caller's slice may change later
	return &signer{macs: sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}}
}

// mac is HMAC-SHA256 over the canonical form of g: the version, then every
// field length-prefixed, so no choice of field values can make two grants
// read alike (a content type cannot borrow bytes from a key).
func (s *signer) mac(g grant) []byte {
	h := s.macs.Get().(hash.Hash)
	defer s.macs.Put(h)
	h.Reset()
	buf := make([]byte, 0, 128+len(g.key)+len(g.contentType)+len(g.filename))
	buf = append(buf, signedURLVersion...)
	for _, f := range [...]string{
		g.method,
		g.key,
		strconv.FormatInt(g.expires.Unix(), 10),
		g.contentType,
		strconv.FormatInt(g.size, 10),
		g.filename,
	} {
		buf = append(buf, '\n')
		buf = strconv.AppendInt(buf, int64(len(f)), 10)
		buf = append(buf, ':')
		buf = append(buf, f...)
	}
	h.Write(buf)
	return h.Sum(nil)
}

// query renders the signed query string of g.
func (s *signer) query(g grant) string {
	q := url.Values{}
	q.Set(paramMethod, g.method)
	q.Set(paramExpires, strconv.FormatInt(g.expires.Unix(), 10))
	switch g.method {
	case http.MethodPut:
		q.Set(paramContentType, g.contentType)
		q.Set(paramSize, strconv.FormatInt(g.size, 10))
	case http.MethodGet:
		q.Set(paramFilename, g.filename)
	}
	q.Set(paramSignature, base64.RawURLEncoding.EncodeToString(s.mac(g)))
	return q.Encode()
}

// verify reads the grant of a request for key with the raw query string
// rawQuery and checks its signature in constant time. It does not look at
// the clock: the caller decides about expiry, so an expired URL and a forged
// one are told apart only after the signature holds.
//
// Parameters must appear once each, in their canonical spelling; those that
// do not belong to the method must be absent; unknown parameters are
// ignored (they sign nothing and change nothing).
func (s *signer) verify(key, rawQuery string) (grant, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return grant{}, errBadSignature
	}
	one := func(name string) (string, bool) {
		v := q[name]
		if len(v) != 1 {
			return "", false
		}
		return v[0], true
	}
	if checkKey(key) != nil {
		return grant{}, errBadSignature
	}
	g := grant{key: key}
	var ok bool
	if g.method, ok = one(paramMethod); !ok {
		return grant{}, errBadSignature
	}
	exp, ok := one(paramExpires)
	if !ok {
		return grant{}, errBadSignature
	}
	unix, ok := canonicalInt(exp)
	if !ok {
		return grant{}, errBadSignature
	}
	g.expires = time.Unix(unix, 0)
	_, hasCT := q[paramContentType]
	_, hasSize := q[paramSize]
	_, hasName := q[paramFilename]
	switch g.method {
	case http.MethodPut:
		if hasName {
			return grant{}, errBadSignature
		}
		if g.contentType, ok = one(paramContentType); !ok {
			return grant{}, errBadSignature
		}
		size, ok := one(paramSize)
		if !ok {
			return grant{}, errBadSignature
		}
		if g.size, ok = canonicalInt(size); !ok || g.size < 0 {
			return grant{}, errBadSignature
		}
	case http.MethodGet:
		if hasCT || hasSize {
			return grant{}, errBadSignature
		}
		if g.filename, ok = one(paramFilename); !ok {
			return grant{}, errBadSignature
		}
	default:
		return grant{}, errBadSignature
	}
	sig, ok := one(paramSignature)
	if !ok {
		return grant{}, errBadSignature
	}
	// Strict, and of the one length a MAC encodes to: no second spelling
	// of the same signature verifies.
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || len(sig) != sigLen || len(got) != sha256.Size {
		return grant{}, errBadSignature
	}
	if !hmac.Equal(got, s.mac(g)) {
		return grant{}, errBadSignature
	}
	return g, nil
}

// canonicalInt parses a decimal integer written the way strconv.FormatInt
// writes it, so one grant has exactly one URL ("+5" and "05" are refused).
func canonicalInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return n, true
}
