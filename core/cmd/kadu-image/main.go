// Command kadu-image builds Kadu's OCI image without a container engine:
// the static bin/kadu (built by `go tool task build`) on an empty base
// (FROM scratch), a non-root user, CA certificates for outbound TLS, and
// /data as the only place the server writes. `go tool task image` runs it.
//
//	kadu-image -binary bin/kadu -out bin/kadu-image.tar [-layout DIR] [-tag kadu:VERSION] [-version VERSION]
//
// -out is a tarball `docker load`, `podman load` and `skopeo copy
// docker-archive:…` read; -layout also writes an OCI image layout directory
// (`skopeo copy oci:DIR …`, `crane push`). Nothing is pulled or pushed: the
// image is assembled from files with github.com/google/go-containerregistry.
//
// It owns the image's layout (see image.go) and must not build the binary
// itself: the Taskfile's build task fixes how that is done.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kadu-image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("kadu-image", flag.ContinueOnError)
	binary := fs.String("binary", "bin/kadu", "the static kadu binary (CGO_ENABLED=0) to put at /kadu")
	out := fs.String("out", "bin/kadu-image.tar", "tarball to write (docker load, podman load, skopeo docker-archive:)")
	layoutDir := fs.String("layout", "", "also write an OCI image layout to this directory (replaced)")
	tag := fs.String("tag", "kadu:dev", "image name and tag recorded in the tarball and the layout")
	version := fs.String("version", "dev", "org.opencontainers.image.version label")
	arch := fs.String("arch", runtime.GOARCH, "architecture of the binary (GOARCH)")
	certs := fs.String("ca-certificates", DefaultCACertificates, "CA bundle copied to "+DefaultCACertificates)
	if err := fs.Parse(args); err != nil {
		return err
	}

	bin, err := os.ReadFile(*binary)
	if err != nil {
		return fmt.Errorf("reading the binary (run `go tool task build` first): %w", err)
	}
	ca, err := os.ReadFile(*certs)
	if err != nil {
		return fmt.Errorf("reading the CA certificates (apt-get install ca-certificates): %w", err)
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", *tag, err)
	}

	img, err := Build(Spec{Binary: bin, CACertificates: ca, Version: *version, Arch: *arch, Created: created})
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(*out, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	if *layoutDir != "" {
		if err := os.RemoveAll(*layoutDir); err != nil {
			return fmt.Errorf("replacing %s: %w", *layoutDir, err)
		}
		p, err := layout.Write(*layoutDir, empty.Index)
		if err != nil {
			return fmt.Errorf("writing the OCI layout %s: %w", *layoutDir, err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref.TagStr(),
		})); err != nil {
			return fmt.Errorf("writing the OCI layout %s: %w", *layoutDir, err)
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image digest: %w", err)
	}
	slog.Info("image written", "tarball", *out, "layout", *layoutDir, "tag", ref.String(), "digest", digest.String())
	return nil
}

// sourceDateEpoch is $SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/),
// else the Unix epoch: the same binary always gives the same image digest.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
