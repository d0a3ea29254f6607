package blob

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary paths and query strings to the verifier of
// local signed URLs. It must never panic, and whatever it accepts must be
// exactly what the signer would have issued for the grant it returns: a
// valid key, and a query that signs to the same signature.
func FuzzVerify(f *testing.F) {
	s := newSigner(testSigningKey)
	exp := t0.Add(15 * time.Minute)
	put := grant{method: http.MethodPut, key: "org_1/file_1", expires: exp, contentType: "text/csv; charset=utf-8", size: 1234}
	get := grant{method: http.MethodGet, key: "org 1/relatório", expires: exp, filename: `março "final".csv`}
	for _, g := range []grant{put, get} {
		q := s.query(g)
		f.Add(g.key, q)
		f.Add(g.key, q+"&"+q)
		f.Add(g.key+"/x", q)
		f.Add(g.key, strings.Replace(q, "method=", "method=x", 1))
		f.Add(g.key, strings.Replace(q, "expires=", "expires=0", 1))
		f.Add(g.key, strings.Replace(q, "expires=", "expires=+", 1))
		f.Add(g.key, strings.Replace(q, "size=", "size=-", 1))
		f.Add(g.key, q[:len(q)-1]+"=")
		f.Add(g.key, q+"%")
	}
	f.Add("", "")
	f.Add("../x", "method=GET")
	f.Fuzz(func(t *testing.T, key, rawQuery string) {
		g, err := s.verify(key, rawQuery)
		if err != nil {
			return
		}
		if checkKey(g.key) != nil || g.key != key {
			t.Fatalf("accepted key %q (asked %q)", g.key, key)
		}
		q, _ := url.ParseQuery(rawQuery)
		if want := base64.RawURLEncoding.EncodeToString(s.mac(g)); q.Get(paramSignature) != want {
			t.Fatalf("accepted signature %q for a grant that signs to %q", q.Get(paramSignature), want)
		}
		again, err := s.verify(g.key, s.query(g))
		if err != nil || again != g {
			t.Fatalf("re-signed grant verifies as %+v, %v; want %+v", again, err, g)
		}
	})
}

// FuzzSignedURLRoundTrip signs arbitrary grants into full URLs, reads them
// back the way the server does (request line → URL.Path, RawQuery) and
// checks the grant survives unchanged, that a different signing key
// refuses it, and that flipping any byte of the signature is refused.
func FuzzSignedURLRoundTrip(f *testing.F) {
	f.Add(true, "org_1/file_1", "text/csv", int64(1234), "", int64(1785240000), uint8(0))
	f.Add(false, "org 1/a?b#c%d+e", "", int64(0), "relatório \"final\";.csv", int64(1), uint8(7))
	f.Add(true, "ação/ü", "application/vnd.ms-excel; name=\"a b\"", int64(1<<40), "", int64(-5), uint8(42))
	s := newSigner(testSigningKey)
	other := newSigner(bytes.Repeat([]byte{7}, MinSigningKeyLen))
	l := &local{signer: s, base: "https://files.example.com/blobs", prefix: "/blobs/"}
	f.Fuzz(func(t *testing.T, isPut bool, key, ct string, size int64, filename string, exp int64, flip uint8) {
		g := grant{method: http.MethodGet, key: key, expires: time.Unix(exp, 0), filename: filename}
		valid := checkKey(key) == nil && checkFilename(filename) == nil
		if isPut {
			g = grant{method: http.MethodPut, key: key, expires: time.Unix(exp, 0), contentType: ct, size: size}
			valid = checkKey(key) == nil && checkContentType(ct) == nil && size >= 1
		}
		if !valid {
			return
		}
		signed, err := url.Parse(l.url(g))
		if err != nil {
			t.Fatalf("signed URL does not parse: %v", err)
		}
		// What the server sees: the request line, parsed by net/http.
		req, err := url.ParseRequestURI(signed.RequestURI())
		if err != nil {
			t.Fatalf("request URI %q does not parse: %v", signed.RequestURI(), err)
		}
		path, ok := strings.CutPrefix(req.Path, l.prefix)
		if !ok {
			t.Fatalf("path %q is not under %q", req.Path, l.prefix)
		}
		got, err := s.verify(path, req.RawQuery)
		if err != nil {
			t.Fatalf("verify(%q, %q) = %v", path, req.RawQuery, err)
		}
		if got.method != g.method || got.key != g.key || !got.expires.Equal(g.expires) ||
			got.contentType != g.contentType || got.size != g.size || got.filename != g.filename {
			t.Fatalf("round trip = %+v, want %+v", got, g)
		}
		if _, err := other.verify(path, req.RawQuery); err == nil {
			t.Fatal("a URL signed with one key verified with another")
		}
		q := req.Query()
		sig := []byte(q.Get(paramSignature))
		sig[int(flip)%len(sig)] ^= 1
		q.Set(paramSignature, string(sig))
		if _, err := s.verify(path, q.Encode()); err == nil {
			t.Fatalf("signature %q with one bit flipped verified", sig)
		}
	})
}
