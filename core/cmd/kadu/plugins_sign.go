package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/plugin/bundlesig"
)

func newPluginsKeygenCmd() *cobra.Command {
	var prefix string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Create a key pair to sign bundles with",
		Long: `Create an Ed25519 key pair in the minisign format: PREFIX.key, the secret
key (unencrypted, readable by you only: keep it like a password, and out
of the repository), and PREFIX.pub, the public key operators trust under
plugins.trusted_keys. An existing file is never overwritten. The secret key
is never printed.

Sign a bundle with kadu plugins sign; the minisign tool reads and writes the
same formats (docs/reference/bundles.md, "Signed bundles").`,
		Example: `  kadu plugins keygen --out ~/.kadu/acme-2026`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix == "" {
				return errors.New("--out: empty; give the path prefix of the two files, e.g. --out acme-2026")
			}
			k, err := bundlesig.GenerateKey(nil)
			if err != nil {
				return err
			}
			secPath, pubPath := prefix+".key", prefix+".pub"
			if err := writeNew(secPath, k.File(), 0o600); err != nil {
				return err
			}
			if err := writeNew(pubPath, k.Public().File(), 0o644); err != nil {
				_ = os.Remove(secPath) // half a key pair is of no use
				return err
			}
			name := strings.ToLower(filepath.Base(prefix))
			if !keyNameRE.MatchString(name) {
				name = "publisher"
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s (secret key, mode 0600: keep it private) and %s (public key)\nkey ID %s\n\n",
				secPath, pubPath, k.ID)
			fmt.Fprintf(w, "Sign a bundle:  kadu plugins sign BUNDLE.wasm --key %s\n", secPath)
			fmt.Fprintf(w, "Trust the key on the server:\n\nplugins:\n  trusted_keys:\n    %s:\n      public_key: %s\n", name, k.Public())
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "out", "kadu-bundle", "path prefix of the files: PREFIX.key (secret) and PREFIX.pub (public)")
	return cmd
}

// keyNameRE is the rule for the names of plugins.trusted_keys entries.
var keyNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// writeNew creates path with data, failing when it exists.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; a key is never overwritten: choose another --out, or move the file away", path)
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func newPluginsSignCmd() *cobra.Command {
	var keyPath string
	cmd := &cobra.Command{
		Use:   "sign BUNDLE",
		Short: "Sign a bundle: write BUNDLE.sig",
		Long: `Sign a bundle with a secret key from kadu plugins keygen, writing the
detached signature BUNDLE.sig next to it (a minisign signature). The bundle
is validated first, as the server does, and the signature names its
manifest's name and version and its sha256: a server refuses it for any
other module, name or version (docs/reference/bundles.md, "Signed bundles").
Sign again after every build.`,
		Example: `  kadu plugins sign bin/acme.wasm --key ~/.kadu/acme-2026.key`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if keyPath == "" {
				return errors.New("--key: required, the secret key file that kadu plugins keygen wrote (PREFIX.key)")
			}
			raw, err := os.ReadFile(keyPath)
			if err != nil {
				return fmt.Errorf("--key: %w", err)
			}
			key, err := bundlesig.ParseSecretKey(raw)
			if err != nil {
				return fmt.Errorf("--key %s: %w", keyPath, err)
			}
			if fi, err := os.Stat(keyPath); err == nil && fi.Mode().Perm()&0o077 != 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s is readable by others (mode %04o); chmod 600 it\n", keyPath, fi.Mode().Perm())
			}
			wasm, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("bundle: %w", err)
			}
			m, err := plugin.ValidateModule(cmd.Context(), path, wasm, nil, userWasmCache())
			if err != nil {
				return fmt.Errorf("%s is not a valid bundle, not signing it: %w", path, err)
			}
			sum := sha256.Sum256(wasm)
			st := bundlesig.Statement{Name: m.Name, Version: m.Version, SHA256: hex.EncodeToString(sum[:])}
			sigPath := plugin.SignatureFile(path)
			if err := writeReplace(sigPath, bundlesig.Sign(key, wasm, st)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "signed %s@%s (sha256 %s) with key ID %s: wrote %s\n",
				st.Name, st.Version, st.SHA256, key.ID, sigPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&keyPath, "key", "", "the secret key file (PREFIX.key from kadu plugins keygen)")
	return cmd
}

// writeReplace writes path through a temporary file renamed over it, so a
// server watching the directory never reads half a signature.
func writeReplace(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
