package bundlesig

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mustKey(t testing.TB) SecretKey {
	t.Helper()
	k, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRing(t testing.TB, keys map[string]PublicKey) *Keyring {
	t.Helper()
	kr, err := NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestVerify covers what an operator sees for each kind of signature: the
// right one is accepted and names the key; every other is refused with the
// reason to act on.
func TestVerify(t *testing.T) {
	t.Parallel()
	module := []byte("\x00asm\x01\x00\x00\x00 a bundle")
	other := []byte("\x00asm\x01\x00\x00\x00 another bundle")
	oldKey, newKey, stranger := mustKey(t), mustKey(t), mustKey(t)
	st := Statement{Name: "partner", Version: "1.2.0", SHA256: sum(module)}
	good := Sign(newKey, module, st)
	ring := mustRing(t, map[string]PublicKey{"partner-2026": newKey.Public(), "partner-2025": oldKey.Public()})

	tampered := bytes.Clone(module)
	tampered[len(tampered)-1] ^= 1
	// A signature whose trusted comment was edited to another version: the
	// global signature no longer matches.
	edited := bytes.Replace(good, []byte("version=1.2.0"), []byte("version=9.9.9"), 1)

	tests := []struct {
		name    string
		ring    *Keyring
		sig     []byte
		module  []byte
		wantErr error  // nil: accepted
		wantMsg string // in the error
		wantKey string // accepted: the key's name
	}{
		{name: "signed by the new key", ring: ring, sig: good, module: module, wantKey: "partner-2026"},
		{name: "signed by the old key during rotation", ring: ring, sig: Sign(oldKey, module, st), module: module, wantKey: "partner-2025"},
		{name: "tampered module", ring: ring, sig: good, module: tampered, wantErr: ErrInvalid, wantMsg: "sign the bundle again"},
		{name: "edited trusted comment", ring: ring, sig: edited, module: module, wantErr: ErrInvalid},
		{name: "signature of another module", ring: ring, sig: Sign(newKey, other, Statement{Name: "partner", Version: "1.2.0", SHA256: sum(other)}),
			module: module, wantErr: ErrInvalid},
		{name: "statement naming another module's sha256", ring: ring, sig: Sign(newKey, module, Statement{Name: "partner", Version: "1.2.0", SHA256: sum(other)}),
			module: module, wantErr: ErrMismatch, wantMsg: "names sha256 " + sum(other)},
		{name: "untrusted key", ring: ring, sig: Sign(stranger, module, st), module: module, wantErr: ErrUntrusted,
			wantMsg: "key ID " + stranger.ID.String() + " is not in plugins.trusted_keys (trusted: partner-2025, partner-2026)"},
		{name: "old key after rotation", ring: mustRing(t, map[string]PublicKey{"partner-2026": newKey.Public()}),
			sig: Sign(oldKey, module, st), module: module, wantErr: ErrUntrusted},
		{name: "no key trusted", ring: nil, sig: good, module: module, wantErr: ErrUntrusted, wantMsg: "none is configured"},
		{name: "not a kadu statement", ring: ring, sig: signComment(newKey, module, "timestamp:1\tfile:x.wasm"), module: module,
			wantErr: ErrMismatch, wantMsg: "not a Kadu bundle statement"},
		{name: "empty file", ring: ring, sig: nil, module: module, wantErr: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := tt.ring.Verify(tt.sig, tt.module, sum(tt.module))
			if tt.wantErr == nil {
				if err != nil || v.KeyName != tt.wantKey || v.Statement != st {
					t.Fatalf("Verify = %+v, %v; want signed by %s for %+v", v, err, tt.wantKey, st)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Verify error = %v; want %v containing %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}

// signComment signs module with an arbitrary trusted comment, as the
// minisign tool does by default.
func signComment(k SecretKey, module []byte, tc string) []byte {
	s := Sign(k, module, Statement{})
	parsed, err := ParseSignature(s)
	if err != nil {
		panic(err)
	}
	parsed.TrustedComment = tc
	global := ed25519Sign(k, parsed.globalMessage())
	copy(parsed.GlobalSig[:], global)
	return parsed.File()
}

// TestCheckNameAndVersion: a valid signature for the module is still
// refused when it was made for another bundle name or version.
func TestCheckNameAndVersion(t *testing.T) {
	t.Parallel()
	v := Verified{Statement: Statement{Name: "partner", Version: "1.2.0"}}
	for _, tt := range []struct {
		name, version string
		ok            bool
	}{
		{"partner", "1.2.0", true},
		{"partner", "1.3.0", false},
		{"other", "1.2.0", false},
	} {
		err := v.Check(tt.name, tt.version)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrMismatch)) {
			t.Errorf("Check(%s, %s) = %v; want ok=%v", tt.name, tt.version, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "signs partner@1.2.0, the module's manifest is "+tt.name+"@"+tt.version) {
			t.Errorf("Check error %q does not say what was signed and what was found", err)
		}
	}
}

// TestMinisignInterop verifies the prehashed test vector of minisign's
// reference verifier (a signature of "test" made by the minisign tool):
// a signature the tool writes passes Kadu's cryptographic checks, and
// only then is refused for not carrying a Kadu statement.
func TestMinisignInterop(t *testing.T) {
	t.Parallel()
	pub, err := ParsePublicKey("untrusted comment: minisign public key E7620F1842B4E81F\n" +
		"RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3\n")
	if err != nil {
		t.Fatal(err)
	}
	if pub.ID.String() != "E7620F1842B4E81F" {
		t.Errorf("key ID = %s, want E7620F1842B4E81F as minisign prints it", pub.ID)
	}
	sig := []byte("untrusted comment: signature from minisign secret key\n" +
		"RUQf6LRCGA9i559r3g7V1qNyJDApGip8MfqcadIgT9CuhV3EMhHoN1mGTkUidF/z7SrlQgXdy8ofjb7bNJJylDOocrCo8KLzZwo=\n" +
		"trusted comment: timestamp:1556193335\tfile:test\n" +
		"y/rUw2y8/hOUYjZU71eHp/Wo1KZ40fGy2VJEDl34XMJM+TX48Ss/17u3IvIfbVR1FkZZSNCisQbuQY+bHwhEBg==\n")
	ring := mustRing(t, map[string]PublicKey{"minisign": pub})
	if _, err := ring.Verify(sig, []byte("test"), sum([]byte("test"))); !errors.Is(err, ErrMismatch) {
		t.Errorf("Verify(minisign's vector) = %v; want the cryptographic checks to pass and ErrMismatch for its comment", err)
	}
	if _, err := ring.Verify(sig, []byte("Test"), sum([]byte("Test"))); !errors.Is(err, ErrInvalid) {
		t.Errorf("Verify(minisign's vector, other bytes) = %v; want ErrInvalid", err)
	}
}

func TestKeyFilesRoundTrip(t *testing.T) {
	t.Parallel()
	k := mustKey(t)
	back, err := ParseSecretKey(k.File())
	if err != nil || back.ID != k.ID || !back.Key.Equal(k.Key) {
		t.Fatalf("ParseSecretKey(File()) = %v, %v", back.ID, err)
	}
	for _, s := range []string{string(k.Public().File()), k.Public().String(), "  " + k.Public().String() + "\n"} {
		pub, err := ParsePublicKey(s)
		if err != nil || !pub.Equal(k.Public()) {
			t.Errorf("ParsePublicKey(%q) = %v, %v; want the key back", s, pub, err)
		}
	}
	if !strings.HasPrefix(k.Public().String(), "RW") {
		t.Errorf("public key %s does not start with RW like minisign's", k.Public())
	}
}

func TestParseSecretKeyRefuses(t *testing.T) {
	t.Parallel()
	k := mustKey(t)
	raw, _ := base64.StdEncoding.DecodeString(strings.Split(string(k.File()), "\n")[1])
	encode := func(mut func(b []byte)) []byte {
		b := bytes.Clone(raw)
		mut(b)
		return []byte("untrusted comment: x\n" + base64.StdEncoding.EncodeToString(b) + "\n")
	}
	for _, tt := range []struct {
		name, want string
		data       []byte
	}{
		{"encrypted", "encrypted with a password", encode(func(b []byte) { copy(b[2:4], "Sc") })},
		{"damaged", "checksum mismatch", encode(func(b []byte) { b[len(b)-40] ^= 1 })},
		{"public key given", "bytes decoded", k.Public().File()},
		{"empty", "empty", nil},
		{"not base64", "not base64", []byte("untrusted comment: x\n!!!\n")},
	} {
		if _, err := ParseSecretKey(tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseSecretKey error = %v; want %q", tt.name, err, tt.want)
		}
	}
}

func TestParseSignatureRefuses(t *testing.T) {
	t.Parallel()
	k := mustKey(t)
	good := string(Sign(k, []byte("m"), Statement{Name: "a", Version: "1.0.0", SHA256: sum([]byte("m"))}))
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	legacy := func() string {
		b, _ := base64.StdEncoding.DecodeString(lines[1])
		b[1] = 'd'
		return lines[0] + "\n" + base64.StdEncoding.EncodeToString(b) + "\n" + lines[2] + "\n" + lines[3] + "\n"
	}()
	for _, tt := range []struct{ name, data, want string }{
		{"three lines", strings.Join(lines[:3], "\n"), "3 lines"},
		{"five lines", good + "extra\n", "5 lines"},
		{"no untrusted comment", "x" + good, "line 1"},
		{"no trusted comment", strings.Replace(good, "trusted comment: kadu", "comment: kadu", 1), "line 3"},
		{"short signature", strings.Replace(good, lines[1], lines[1][:40], 1), "line 2"},
		{"bad global signature", strings.Replace(good, lines[3], "AAAA", 1), "line 4"},
		{"legacy signature", legacy, "legacy"},
		{"huge", strings.Repeat("a", maxSigFile+1), "too long"},
	} {
		_, err := ParseSignature([]byte(tt.data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseSignature error = %v; want ErrMalformed with %q", tt.name, err, tt.want)
		}
	}
	if _, err := ParseSignature([]byte(strings.ReplaceAll(good, "\n", "\r\n"))); err != nil {
		t.Errorf("a signature with CRLF line ends (copied through Windows): %v", err)
	}
}

func TestNewKeyringRefusesDuplicateIDs(t *testing.T) {
	t.Parallel()
	k := mustKey(t)
	if _, err := NewKeyring(map[string]PublicKey{"a": k.Public(), "b": k.Public()}); err == nil ||
		!strings.Contains(err.Error(), `"a" and "b" have the same key ID`) {
		t.Errorf("NewKeyring with one key twice = %v; want an error naming both", err)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	a, b := mustKey(t), mustKey(t)
	one := mustRing(t, map[string]PublicKey{"a": a.Public(), "b": b.Public()})
	same := mustRing(t, map[string]PublicKey{"b": b.Public(), "a": a.Public()})
	renamed := mustRing(t, map[string]PublicKey{"a": a.Public(), "c": b.Public()})
	if one.Fingerprint() != same.Fingerprint() || one.Fingerprint() == renamed.Fingerprint() || (*Keyring)(nil).Fingerprint() != "" {
		t.Error("Fingerprint must depend on the names and keys only")
	}
}
