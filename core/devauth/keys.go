package devauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	jose "github.com/go-jose/go-jose/v4"
)

// signingAlg is the one JWS algorithm the server signs with. ES256 on P-256:
// keys are generated in microseconds on first start (RSA-2048 takes up to a
// second, and every test makes a fresh data directory), tokens are short,
// and every JOSE library, go-oidc included, verifies it. The tokens are read
// only by Kadu itself, through core/auth.
const signingAlg = jose.ES256

// File names under DataDir/devauth.
const (
	keyDirName      = "devauth"
	signingKeyFile  = "signing-key.json"
	sealingKeyFile  = "sealing-key.json"
	sealingKeyBytes = 32
)

// keys is the key material a Server runs on.
type keys struct {
	signing *jose.JSONWebKey // private ES256 key, KeyID = RFC 7638 thumbprint
	master  []byte           // 32 bytes; sealing and client-secret keys derive from it
}

// loadOrCreateKeys reads the keys under dataDir/devauth, creating any that
// are missing. With an empty dataDir the keys are made in memory only.
func loadOrCreateKeys(dataDir string, log *slog.Logger) (*keys, error) {
	if dataDir == "" {
		log.Warn("devauth: no data directory; signing keys live in memory and tokens die with the process")
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generating signing key: %w", err)
		}
		signing, err := signingJWK(priv)
		if err != nil {
			return nil, err
		}
		return &keys{signing: signing, master: randomBytes(sealingKeyBytes)}, nil
	}

	dir := filepath.Join(dataDir, keyDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating key directory: %w", err)
	}
	if err := tighten(dir, 0o700, log); err != nil {
		return nil, err
	}

	signingPath := filepath.Join(dir, signingKeyFile)
	raw, err := loadOrCreate(signingPath, log, func() ([]byte, error) {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generating signing key: %w", err)
		}
		jwk, err := signingJWK(priv)
		if err != nil {
			return nil, err
		}
		return json.MarshalIndent(jwk, "", "  ")
	})
	if err != nil {
		return nil, err
	}
	signing, err := parseSigningKey(raw)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", signingPath, err)
	}

	sealingPath := filepath.Join(dir, sealingKeyFile)
	raw, err = loadOrCreate(sealingPath, log, func() ([]byte, error) {
		jwk := jose.JSONWebKey{Key: randomBytes(sealingKeyBytes), Algorithm: "A256GCM", Use: "enc"}
		return json.MarshalIndent(jwk, "", "  ")
	})
	if err != nil {
		return nil, err
	}
	master, err := parseSealingKey(raw)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", sealingPath, err)
	}
	return &keys{signing: signing, master: master}, nil
}

// loadOrCreate returns the contents of path, first writing make's output
// there if the file does not exist. The file appears atomically with mode
// 0600 and an existing file is never overwritten, so two processes starting
// at once agree on one key.
func loadOrCreate(path string, log *slog.Logger, make func() ([]byte, error)) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		if err := tighten(path, 0o600, log); err != nil {
			return nil, err
		}
		return raw, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading key: %w", err)
	}

	data, err := make()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return nil, fmt.Errorf("creating key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("creating key file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("writing key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("writing key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing key file: %w", err)
	}
	// Link fails if path exists: whoever linked first wins, and we read theirs.
	err = os.Link(tmp.Name(), path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links on this file system: create exclusively instead.
		err = writeExclusive(path, data)
	}
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("installing key file: %w", err)
	}
	log.Info("devauth: created key", "path", path)
	return data, nil
}

// writeExclusive creates path with mode 0600 and writes data, failing with
// fs.ErrExist if path exists.
func writeExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tighten makes path no more open than perm, warning when it was.
func tighten(path string, perm fs.FileMode, log *slog.Logger) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("checking key permissions: %w", err)
	}
	if fi.Mode().Perm()&^perm == 0 {
		return nil
	}
	log.Warn("devauth: key permissions too open; tightening", "path", path, "mode", fi.Mode().Perm().String())
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("tightening key permissions: %w", err)
	}
	return nil
}

// signingJWK wraps priv as a private JWK with its thumbprint as KeyID.
func signingJWK(priv *ecdsa.PrivateKey) (*jose.JSONWebKey, error) {
	jwk := &jose.JSONWebKey{Key: priv, Algorithm: string(signingAlg), Use: "sig"}
	pub := jwk.Public()
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("computing key id: %w", err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	return jwk, nil
}

func parseSigningKey(raw []byte) (*jose.JSONWebKey, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("parsing JWK: %w", err)
	}
	priv, ok := jwk.Key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, fmt.Errorf("want a private P-256 key, got %T", jwk.Key)
	}
	return signingJWK(priv)
}

func parseSealingKey(raw []byte) ([]byte, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("parsing JWK: %w", err)
	}
	k, ok := jwk.Key.([]byte)
	if !ok || len(k) != sealingKeyBytes {
		return nil, fmt.Errorf("want a %d-byte symmetric key", sealingKeyBytes)
	}
	return k, nil
}

// randomBytes returns n bytes from crypto/rand, which never fails.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
