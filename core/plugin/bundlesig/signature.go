package bundlesig

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// The ways a signature is refused. Verify wraps one of them in an error
// that says what was found and what to do; callers test with errors.Is.
var (
	// ErrMalformed: the signature file is not a minisign signature.
	ErrMalformed = errors.New("malformed signature")
	// ErrUntrusted: made by a key that is not trusted.
	ErrUntrusted = errors.New("signed by an untrusted key")
	// ErrInvalid: the module or the trusted comment is not what was signed.
	ErrInvalid = errors.New("invalid signature")
	// ErrMismatch: a valid signature, but for another module, bundle or
	// version.
	ErrMismatch = errors.New("signature for another bundle")
)

const (
	sigBlob = 2 + keyIDSize + ed25519.SignatureSize
	// maxSigFile bounds a signature file: four short lines.
	maxSigFile = 8 << 10
	// statementPrefix starts the trusted comment of a Kadu signature.
	statementPrefix = "kadu-bundle"
)

// Statement is what a signature vouches for besides the module's bytes: the
// bundle's name and manifest version, and the module's sha256.
type Statement struct {
	Name    string
	Version string
	SHA256  string // 64 lower-case hex digits
}

// TrustedComment is s as minisign's trusted comment:
// "kadu-bundle name=<name> version=<version> sha256=<hex>".
func (s Statement) TrustedComment() string {
	return statementPrefix + " name=" + s.Name + " version=" + s.Version + " sha256=" + s.SHA256
}

var (
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// valueRE is what a name or version may hold: no spaces, no "=", no
	// control characters, so the statement parses one way only.
	valueRE = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,128}$`)
)

// ParseStatement reads a trusted comment written by Statement.TrustedComment.
// It is strict: the three fields, in that order, single spaces.
func ParseStatement(tc string) (Statement, error) {
	want := fmt.Errorf("trusted comment %q is not a Kadu bundle statement; want %q",
		truncate(tc, 200), "kadu-bundle name=<name> version=<version> sha256=<sha256 of the .wasm>")
	fields := strings.Split(tc, " ")
	if len(fields) != 4 || fields[0] != statementPrefix {
		return Statement{}, want
	}
	var s Statement
	for i, dst := range []*string{&s.Name, &s.Version, &s.SHA256} {
		key := [...]string{"name", "version", "sha256"}[i]
		v, ok := strings.CutPrefix(fields[i+1], key+"=")
		if !ok || !valueRE.MatchString(v) {
			return Statement{}, want
		}
		*dst = v
	}
	if !sha256RE.MatchString(s.SHA256) {
		return Statement{}, fmt.Errorf("trusted comment: sha256 %q is not 64 lower-case hex digits", s.SHA256)
	}
	return s, nil
}

// Signature is a parsed minisign signature file.
type Signature struct {
	UntrustedComment string
	KeyID            KeyID
	Sig              [ed25519.SignatureSize]byte // over BLAKE2b-512 of the module
	TrustedComment   string
	GlobalSig        [ed25519.SignatureSize]byte // over Sig || TrustedComment
}

// Sign signs module with k for st and returns the signature file. st.SHA256
// must be the module's sha256 (Verify checks it).
func Sign(k SecretKey, module []byte, st Statement) []byte {
	h := blake2b.Sum512(module)
	s := Signature{
		UntrustedComment: "signature from kadu plugins sign, key " + k.ID.String(),
		KeyID:            k.ID,
		TrustedComment:   st.TrustedComment(),
	}
	copy(s.Sig[:], ed25519.Sign(k.Key, h[:]))
	copy(s.GlobalSig[:], ed25519.Sign(k.Key, s.globalMessage()))
	return s.File()
}

func (s *Signature) globalMessage() []byte {
	return append(bytes.Clone(s.Sig[:]), s.TrustedComment...)
}

// File is s in the minisign signature file format.
func (s *Signature) File() []byte {
	blob := make([]byte, 0, sigBlob)
	blob = append(blob, algED[:]...)
	blob = append(blob, s.KeyID[:]...)
	blob = append(blob, s.Sig[:]...)
	return []byte("untrusted comment: " + s.UntrustedComment + "\n" +
		base64.StdEncoding.EncodeToString(blob) + "\n" +
		"trusted comment: " + s.TrustedComment + "\n" +
		base64.StdEncoding.EncodeToString(s.GlobalSig[:]) + "\n")
}

// ParseSignature reads a minisign signature file: an untrusted comment, the
// signature, a trusted comment and the global signature, a line each. Only
// prehashed ("ED") signatures are accepted, minisign's default and what
// Sign writes; a legacy "Ed" one (minisign -l) is refused with what to do.
func ParseSignature(data []byte) (*Signature, error) {
	if len(data) > maxSigFile {
		return nil, fmt.Errorf("%w: %d bytes, too long for a minisign signature", ErrMalformed, len(data))
	}
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("%w: %d lines, want 4 (untrusted comment, signature, trusted comment, global signature)",
			ErrMalformed, len(lines))
	}
	var s Signature
	var ok bool
	if s.UntrustedComment, ok = strings.CutPrefix(lines[0], "untrusted comment: "); !ok {
		return nil, fmt.Errorf("%w: line 1 does not start with \"untrusted comment: \"", ErrMalformed)
	}
	if s.TrustedComment, ok = strings.CutPrefix(lines[2], "trusted comment: "); !ok {
		return nil, fmt.Errorf("%w: line 3 does not start with \"trusted comment: \"", ErrMalformed)
	}
	blob, err := base64.StdEncoding.DecodeString(lines[1])
	if err != nil || len(blob) != sigBlob {
		return nil, fmt.Errorf("%w: line 2 is not a base64 minisign signature of %d bytes", ErrMalformed, sigBlob)
	}
	switch alg := [2]byte(blob[:2]); alg {
	case algED:
	case algEd:
		return nil, fmt.Errorf("%w: a legacy (not prehashed) minisign signature; sign again without minisign's -l option, "+
			"or with kadu plugins sign", ErrMalformed)
	default:
		return nil, fmt.Errorf("%w: signature algorithm %q, want \"ED\"", ErrMalformed, alg[:])
	}
	copy(s.KeyID[:], blob[2:2+keyIDSize])
	copy(s.Sig[:], blob[2+keyIDSize:])
	global, err := base64.StdEncoding.DecodeString(lines[3])
	if err != nil || len(global) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: line 4 is not a base64 global signature of %d bytes", ErrMalformed, ed25519.SignatureSize)
	}
	copy(s.GlobalSig[:], global)
	return &s, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
