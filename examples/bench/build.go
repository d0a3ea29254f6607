package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildGo runs `go build` of pkg (relative to dir) into out, with extra
// environment (GOOS=wasip1 … for the bundle).
func buildGo(ctx context.Context, dir, pkg, out string, env []string, flags ...string) error {
	args := append([]string{"build", "-trimpath", "-buildvcs=false"}, flags...)
	args = append(args, "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, b)
	}
	return nil
}

// buildEcho builds the echo bundle as a partner builds a Go bundle (a WASI
// reactor, sdk/ABI.md) and returns its sha256, the pin the bench
// configuration needs.
func buildEcho(ctx context.Context, dir, out string) (string, error) {
	if err := buildGo(ctx, dir, "./echo", out, []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
		"-buildmode=c-shared"); err != nil {
		return "", err
	}
	return fileSHA256(out)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// findRepo returns the repository root: dir, or the first parent of it,
// whose go.mod is the module github.com/kobana/kadu.
func findRepo(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			strings.HasPrefix(strings.TrimSpace(string(b)), "module github.com/kobana/kadu\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module github.com/kobana/kadu in %s or above it (run from the repository, or pass --repo)", dir)
		}
	}
}
