package plugin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/kobana/kadu/core/plugin/bundlesig"
)

// Trust is the signature policy of bundles read from files: the keys
// trusted to sign them and whether a signature is required. A bundle
// built into the binary (BundleConfig.Wasm) is exempt: it is pinned and
// cannot change under the process.
//
// A signature present next to a bundle is always verified, required or
// not: an invalid one, or one by an untrusted key, refuses the bundle.
type Trust struct {
	// Keys are the trusted keys (plugins.trusted_keys). Nil trusts none.
	Keys *bundlesig.Keyring
	// Require refuses a bundle file without a signature
	// (plugins.require_signature).
	Require bool
}

func (t Trust) equal(o Trust) bool {
	return t.Require == o.Require && t.Keys.Fingerprint() == o.Keys.Fingerprint()
}

// SignatureFile is where the detached signature of the bundle file path is
// read from: path + ".sig" (foo.wasm.sig for foo.wasm).
func SignatureFile(path string) string { return path + ".sig" }

// Signature states of BundleStatus.Signature.
const (
	SignatureSigned   = "signed"
	SignatureUnsigned = "unsigned"
	SignatureBuiltIn  = "built_in" // built into the binary: exempt
)

// maxSignatureBytes bounds the .sig file read: a minisign signature is
// four short lines.
const maxSignatureBytes = 64 << 10

// sigState is what a version was loaded with: the signature file's
// content digest (to notice a changed file) and who signed it.
type sigState struct {
	builtIn  bool
	present  bool
	sum      [sha256.Size]byte   // of the .sig file when present
	verified *bundlesig.Verified // nil: unsigned
}

// readSignature returns the signature file of path, or nil when there is
// none.
func readSignature(path string) ([]byte, error) {
	f, err := os.Open(SignatureFile(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading signature file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSignatureBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading signature file %s: %w", SignatureFile(path), err)
	}
	if data == nil {
		data = []byte{} // present but empty: verified, and refused as malformed
	}
	return data, nil
}

// verifySignature applies cfg.Trust to the module read from cfg.Path,
// before anything is compiled. The statement's name and version are
// checked against the manifest later (sigState.checkManifest).
func verifySignature(cfg BundleConfig, wasm []byte, sha string) (sigState, error) {
	if cfg.Wasm != nil {
		return sigState{builtIn: true}, nil
	}
	data, err := readSignature(cfg.Path)
	if err != nil {
		return sigState{}, err
	}
	sigPath := SignatureFile(cfg.Path)
	if data == nil {
		if cfg.Trust.Require {
			return sigState{}, fmt.Errorf("signature file %s is missing, and plugins.require_signature is true: "+
				"ask the publisher for the bundle's .sig (kadu plugins sign %s --key FILE writes it)", sigPath, cfg.Path)
		}
		return sigState{}, nil
	}
	v, err := cfg.Trust.Keys.Verify(data, wasm, sha)
	if err != nil {
		return sigState{}, fmt.Errorf("signature file %s refused: %w", sigPath, err)
	}
	return sigState{present: true, sum: sha256.Sum256(data), verified: &v}, nil
}

// checkManifest refuses a signature made for another name or version than
// the manifest's.
func (s sigState) checkManifest(sigPath, name, version string) error {
	if s.verified == nil {
		return nil
	}
	if err := s.verified.Check(name, version); err != nil {
		return fmt.Errorf("signature file %s refused: %w", sigPath, err)
	}
	return nil
}

// signatureChanged reports whether v's signature file is no longer the one
// v was loaded with (written, replaced or removed): Reload then loads the
// bundle again, so the new signature is verified like a new module. A file
// that cannot be read counts as changed: the load reports why.
func (v *version) signatureChanged() bool {
	if v.sig.builtIn {
		return false
	}
	data, err := readSignature(v.cfg.Path)
	if err != nil {
		return true
	}
	if data == nil {
		return v.sig.present
	}
	sum := sha256.Sum256(data)
	return !v.sig.present || !bytes.Equal(sum[:], v.sig.sum[:])
}

// unchanged reports whether cfg (defaulted) loads the same version as v:
// the same configuration and the same signature file.
func (v *version) unchanged(cfg BundleConfig) bool {
	return v.cfg.equal(cfg) && !v.signatureChanged()
}

// signatureStatus fills the signature fields of st.
func (v *version) signatureStatus(st *BundleStatus) {
	switch {
	case v.sig.builtIn:
		st.Signature = SignatureBuiltIn
	case v.sig.verified != nil:
		st.Signature, st.SignedBy, st.SignerKeyID = SignatureSigned, v.sig.verified.KeyName, v.sig.verified.KeyID.String()
	default:
		st.Signature = SignatureUnsigned
	}
}

// signedBy names the trusted key that signed v, for logs; "" when unsigned.
func (v *version) signedBy() string {
	if v.sig.verified == nil {
		return ""
	}
	return v.sig.verified.KeyName + " (" + v.sig.verified.KeyID.String() + ")"
}

// VerifySignature checks the signature of the bundle file at path, whose
// module is wasm and whose manifest is name@version, under trust, as a
// load does: for `kadu plugins list`, offline. It returns the name of the
// trusted key that signed it, or "" when it is unsigned and that is
// allowed.
func VerifySignature(trust Trust, path string, wasm []byte, name, version string) (string, error) {
	sum := sha256.Sum256(wasm)
	s, err := verifySignature(BundleConfig{Path: path, Trust: trust}, wasm, hex.EncodeToString(sum[:]))
	if err != nil {
		return "", err
	}
	if err := s.checkManifest(SignatureFile(path), name, version); err != nil {
		return "", err
	}
	if s.verified == nil {
		return "", nil
	}
	return s.verified.KeyName, nil
}
