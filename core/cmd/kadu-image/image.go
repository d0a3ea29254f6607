package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts. docs/operations.md and config/deploy/ rely on
// them: change them together.
const (
	// UID and GID run the server: 65532 is the "nonroot" id of distroless
	// images, which Kubernetes policies commonly expect. Numeric in the
	// image config so that runAsNonRoot can verify it without /etc/passwd.
	UID = 65532
	GID = 65532
	// UserName names UID in /etc/passwd and GID in /etc/group.
	UserName = "kadu"

	// DataDir is the one writable place: data_dir (KADU_DATA_DIR), hence
	// the SQLite database, local blobs, generated keys and the compiled
	// bundle cache (plugins.cache_dir defaults to <data_dir>/wasm-cache).
	DataDir = "/data"
	// TmpDir is TMPDIR; a volume too, so a read-only root filesystem
	// still has a scratch directory.
	TmpDir = "/tmp"

	// BinaryPath is the entrypoint.
	BinaryPath = "/kadu"

	// DefaultCACertificates is where Debian keeps the CA bundle, and where
	// Go's crypto/x509 looks first on Linux.
	DefaultCACertificates = "/etc/ssl/certs/ca-certificates.crt"

	// Source is the org.opencontainers.image.source label.
	Source = "https://github.com/kobana/kadu"
)

// Ports the image exposes: the public listener (addr) and the admin
// listener (admin_addr). The image does not set the addresses: both
// default to loopback, and listening on other interfaces needs auth.issuer
// (config/deploy/kubernetes sets them).
var Ports = []string{"8080/tcp", "9090/tcp"}

// Spec is what varies between two builds of the image.
type Spec struct {
	Binary         []byte    // static linux kadu binary
	CACertificates []byte    // PEM bundle
	Version        string    // org.opencontainers.image.version
	Arch           string    // GOARCH of Binary
	Created        time.Time // every timestamp in the image (SOURCE_DATE_EPOCH)
}

// Build assembles the image: an OCI manifest and config, FROM scratch, with
// two layers — the base files (users, CA certificates, /data, /tmp), which
// change rarely, then /kadu, which changes with every build.
func Build(s Spec) (v1.Image, error) {
	if len(s.Binary) == 0 {
		return nil, fmt.Errorf("building the image: the binary is empty")
	}
	base, err := layer(s.Created, baseFiles(s.CACertificates))
	if err != nil {
		return nil, fmt.Errorf("building the base layer: %w", err)
	}
	bin, err := layer(s.Created, []file{{path: BinaryPath[1:], mode: 0o755, body: s.Binary}})
	if err != nil {
		return nil, fmt.Errorf("building the binary layer: %w", err)
	}

	created := v1.Time{Time: s.Created}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: s.Arch,
		OS:           "linux",
		Created:      created,
		Config:       imageConfig(s.Version),
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("setting the image config: %w", err)
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "kadu-image: users, CA certificates, " + DataDir + ", " + TmpDir}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "kadu-image: " + BinaryPath}},
	)
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	return img, nil
}

// imageConfig is the runtime configuration: what `docker run IMAGE` does.
func imageConfig(version string) v1.Config {
	ports := make(map[string]struct{}, len(Ports))
	for _, p := range Ports {
		ports[p] = struct{}{}
	}
	return v1.Config{
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"serve"},
		User:       strconv.Itoa(UID) + ":" + strconv.Itoa(GID),
		WorkingDir: "/",
		Env: []string{
			"KADU_DATA_DIR=" + DataDir,
			// Nothing else may land on the (read-only) root filesystem:
			// the home directory (and so ~ and XDG defaults) is the data
			// volume, temporary files go to the tmp volume.
			"HOME=" + DataDir,
			"TMPDIR=" + TmpDir,
			"SSL_CERT_FILE=" + DefaultCACertificates,
		},
		ExposedPorts: ports,
		Volumes:      map[string]struct{}{DataDir: {}, TmpDir: {}},
		StopSignal:   "SIGTERM", // starts the drain (http.drain_delay)
		Labels: map[string]string{
			"org.opencontainers.image.title":       "kadu",
			"org.opencontainers.image.description": "Kadu MCP server",
			"org.opencontainers.image.version":     version,
			"org.opencontainers.image.source":      Source,
		},
	}
}

// file is one entry of a layer; a nil body with a trailing "/" path is a
// directory.
type file struct {
	path     string // relative, no leading "/"
	mode     int64  // permission bits, plus 0o1000 (sticky)
	uid, gid int
	body     []byte
}

func baseFiles(ca []byte) []file {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("%s:x:%d:%d:Kadu:%s:/sbin/nologin\n", UserName, UID, GID, DataDir)
	group := "root:x:0:\n" + fmt.Sprintf("%s:x:%d:\n", UserName, GID)
	return []file{
		{path: "etc/", mode: 0o755},
		{path: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{path: "etc/group", mode: 0o644, body: []byte(group)},
		{path: "etc/ssl/", mode: 0o755},
		{path: "etc/ssl/certs/", mode: 0o755},
		{path: DefaultCACertificates[1:], mode: 0o644, body: ca},
		// 0700 like the data_dir kadu creates itself: keys and the
		// database are there.
		{path: DataDir[1:] + "/", mode: 0o700, uid: UID, gid: GID},
		{path: TmpDir[1:] + "/", mode: 0o1777},
	}
}

// layer writes files into an uncompressed tar, every timestamp at mtime,
// and wraps it as a gzip-compressed OCI layer.
func layer(mtime time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.path, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: mtime, Format: tar.FormatPAX}
		if f.path[len(f.path)-1] == '/' {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, fmt.Errorf("tar body %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the tar: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
