// Package embedded holds the first-party bundles (tasks, executions, files,
// webhooks) built into the kadu binary, so that the one binary serves its
// tools from any directory with no bundle file beside it.
//
// It owns the embedded copies only: `go tool task build:plugins` writes them
// to wasm/<name>.wasm before `go tool task build` compiles the binary. A
// binary built without them (plain `go build`, `go test`) embeds none, and
// Bundle reports it; core/app then asks for a path. It must not decide which
// bundles are enabled, pinned or required: that is core/config's.
package embedded

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// wasm is the directory the build writes; README.md keeps it (and this
// pattern) non-empty in a clean clone.
//
//go:embed wasm
var wasm embed.FS

// Bundle returns the embedded module of the first-party bundle name, or nil
// when this binary was built without it.
func Bundle(name string) []byte {
	b, err := wasm.ReadFile("wasm/" + name + ".wasm")
	if err != nil {
		return nil
	}
	return b
}

// Module is one embedded bundle, for `kadu version`.
type Module struct {
	Name   string // file name without .wasm: the bundle's name
	SHA256 string // hex
	Wasm   []byte
}

// Modules lists the embedded bundles by name.
func Modules() ([]Module, error) {
	entries, err := wasm.ReadDir("wasm")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []Module
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".wasm")
		if !ok || e.IsDir() {
			continue
		}
		b, err := wasm.ReadFile(path.Join("wasm", e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out = append(out, Module{Name: name, SHA256: hex.EncodeToString(sum[:]), Wasm: b})
	}
	slices.SortFunc(out, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
