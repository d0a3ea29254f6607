package main

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// buildStatic builds core/cmd/kadu the way the Taskfile's build task does
// (CGO_ENABLED=0, -trimpath) and returns its path.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kadu")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold build on a busy machine
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version=v0.0.0-imagetest",
		"-o", bin, "./core/cmd/kadu")
	cmd.Dir = filepath.Join("..", "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./core/cmd/kadu: %v\n%s", err, out)
	}
	return bin
}

// entry is one file of the flattened image.
type entry struct {
	typ      byte
	mode     int64
	uid, gid int
	body     []byte
}

// flatten reads the image's filesystem as a container runtime would see it.
func flatten(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]entry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("reading the image filesystem: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("reading %s: %v", h.Name, err)
		}
		files["/"+strings.Trim(h.Name, "/")] = entry{typ: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid, body: body}
	}
}

// The image go tool task image writes: what a container runtime reads from
// the tarball, what is in its filesystem, and that the binary in it runs.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kadu binary")
	}
	binPath := buildStatic(t)
	out := filepath.Join(t.TempDir(), "kadu-image.tar")
	layoutDir := filepath.Join(t.TempDir(), "oci")
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if err := run([]string{"-binary", binPath, "-out", out, "-layout", layoutDir,
		"-tag", "kadu:v0.0.0-imagetest", "-version", "v0.0.0-imagetest"}); err != nil {
		t.Fatalf("kadu-image: %v", err)
	}

	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatalf("reading the tarball as docker load would: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{"/kadu"}) || !slices.Equal(c.Cmd, []string{"serve"}) {
		t.Errorf("entrypoint %q cmd %q, want [/kadu] [serve]", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (numeric, so runAsNonRoot can check it)", c.User)
	}
	for _, p := range []string{"8080/tcp", "9090/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v, want /data", c.Volumes)
	}
	for _, kv := range []string{"KADU_DATA_DIR=/data", "HOME=/data", "TMPDIR=/tmp"} {
		if !slices.Contains(c.Env, kv) {
			t.Errorf("env %q lacks %s: the server would write outside the volumes", c.Env, kv)
		}
	}
	if c.Labels["org.opencontainers.image.version"] != "v0.0.0-imagetest" ||
		c.Labels["org.opencontainers.image.source"] != "https://github.com/kobana/kadu" {
		t.Errorf("labels %v", c.Labels)
	}
	if cf.OS != "linux" || cf.Created.Unix() != 1700000000 {
		t.Errorf("os %q created %v, want linux at SOURCE_DATE_EPOCH", cf.OS, cf.Created)
	}

	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	// A docker-archive tarball records no media types (docker load makes
	// its own manifest); the OCI manifest is checked in the layout below.
	if len(m.Layers) != 2 {
		t.Errorf("%d layers, want 2 (base files, then /kadu)", len(m.Layers))
	}

	files := flatten(t, img)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"/data", "/etc", "/etc/group", "/etc/passwd", "/etc/ssl", "/etc/ssl/certs",
		"/etc/ssl/certs/ca-certificates.crt", "/kadu", "/tmp"}
	if !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
	if f := files["/kadu"]; f.typ != tar.TypeReg || f.mode != 0o755 || f.uid != 0 {
		t.Errorf("/kadu: type %c mode %o uid %d, want a root-owned 0755 file", f.typ, f.mode, f.uid)
	}
	if f := files["/data"]; f.typ != tar.TypeDir || f.uid != 65532 || f.gid != 65532 {
		t.Errorf("/data: type %c owner %d:%d, want a directory owned by 65532:65532", f.typ, f.uid, f.gid)
	}
	if f := files["/tmp"]; f.mode != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", f.mode)
	}
	if !strings.Contains(string(files["/etc/passwd"].body), "kadu:x:65532:65532:") ||
		!strings.Contains(string(files["/etc/group"].body), "kadu:x:65532:") {
		t.Errorf("the user has no name:\n%s%s", files["/etc/passwd"].body, files["/etc/group"].body)
	}
	if !strings.Contains(string(files["/etc/ssl/certs/ca-certificates.crt"].body), "BEGIN CERTIFICATE") {
		t.Error("no CA certificates in the image")
	}

	// The binary inside is static (FROM scratch has no loader) and runs.
	inside := filepath.Join(t.TempDir(), "kadu")
	if err := os.WriteFile(inside, files["/kadu"].body, 0o755); err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(inside)
	if err != nil {
		t.Fatalf("/kadu is not an ELF binary: %v", err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/kadu is dynamically linked; the image has no loader (build with CGO_ENABLED=0)")
		}
	}
	ef.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	version, err := exec.CommandContext(ctx, inside, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(version), "v0.0.0-imagetest") {
		t.Errorf("/kadu version: %v\n%s", err, version)
	}

	// The OCI layout holds the same image: the same config (the docker
	// tarball has no room for the OCI manifest itself, so compare below it).
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatalf("reading the OCI layout: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.0.0-imagetest" {
		t.Fatalf("layout index %+v, want one image tagged v0.0.0-imagetest", im.Manifests)
	}
	limg, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := limg.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if lm.MediaType != types.OCIManifestSchema1 || lm.Config.MediaType != types.OCIConfigJSON || len(lm.Layers) != 2 {
		t.Errorf("layout manifest %s, config %s, %d layers; want an OCI manifest and config, 2 layers",
			lm.MediaType, lm.Config.MediaType, len(lm.Layers))
	}
	for _, l := range lm.Layers {
		if l.MediaType != types.OCILayer {
			t.Errorf("layer %s is %s, want %s", l.Digest, l.MediaType, types.OCILayer)
		}
	}
	if lm.Config.Digest != m.Config.Digest {
		t.Errorf("the layout's config %s differs from the tarball's %s", lm.Config.Digest, m.Config.Digest)
	}
}

// The same binary and SOURCE_DATE_EPOCH give the same image digest.
func TestImageReproducible(t *testing.T) {
	t.Parallel()
	spec := Spec{Binary: []byte("\x7fELF not really"), CACertificates: []byte("-----BEGIN CERTIFICATE-----\n"),
		Version: "v1", Arch: "amd64", Created: time.Unix(1700000000, 0).UTC()}
	var digests []v1.Hash
	for range 2 {
		img, err := Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds gave %s and %s", digests[0], digests[1])
	}
	if _, err := Build(Spec{}); err == nil {
		t.Error("Build with no binary succeeded")
	}
}
