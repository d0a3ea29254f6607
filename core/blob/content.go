package blob

import (
	"fmt"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what a signed URL carries; generous for real files, small
// enough to keep a URL and its headers well under any proxy's limits.
const (
	maxContentTypeLen = 255
	maxFilenameLen    = 255
)

// checkContentType accepts a media type as a client would send it in
// Content-Type, parameters included ("text/csv; charset=utf-8"). The
// handler compares it byte for byte, as S3 does with a signed header.
func checkContentType(ct string) error {
	switch {
	case ct == "":
		return fmt.Errorf("content type is empty; give the media type the client will send, e.g. text/csv")
	case len(ct) > maxContentTypeLen:
		return fmt.Errorf("content type is %d bytes long, the limit is %d", len(ct), maxContentTypeLen)
	case strings.IndexFunc(ct, func(r rune) bool { return r > unicode.MaxASCII || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("content type %q has a control or non-ASCII character", ct)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("content type %q is not a media type (want type/subtype, e.g. text/csv): %w", ct, err)
	}
	// ParseMediaType takes a bare token such as "csv"; a client would not.
	if typ, sub, ok := strings.Cut(mt, "/"); !ok || typ == "" || sub == "" {
		return fmt.Errorf("content type %q is not a media type (want type/subtype, e.g. text/csv)", ct)
	}
	return nil
}

// checkFilename accepts the name a download is saved under: any non-empty
// UTF-8 text without control characters. contentDisposition escapes the
// rest, so quotes, slashes and spaces are harmless.
func checkFilename(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("filename is empty; give the name the download is saved under")
	case len(name) > maxFilenameLen:
		return fmt.Errorf("filename is %d bytes long, the limit is %d", len(name), maxFilenameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("filename %q is not valid UTF-8", name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("filename %q contains a control character", name)
	}
	return nil
}

// contentDisposition is the attachment header for filename in the form of
// RFC 6266 and RFC 8187, every byte outside attr-char percent-encoded:
//
//	attachment; filename*=UTF-8''extrato%20de%20mar%C3%A7o.csv
//
// No plain filename="…" fallback: every current browser and HTTP client
// reads filename*, and one form leaves nothing to quote wrongly.
func contentDisposition(filename string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len("attachment; filename*=UTF-8''") + 3*len(filename))
	b.WriteString("attachment; filename*=UTF-8''")
	for i := 0; i < len(filename); i++ {
		c := filename[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
	return b.String()
}

// isAttrChar reports whether c may appear unescaped in an RFC 8187 value.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
