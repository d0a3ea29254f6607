package blob

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"testing"
)

// TestUploadOnFullDisk uploads through a presigned URL into a real full
// file system (a 1 MiB tmpfs; mounting needs root, as in CI): the client
// gets 503 unavailable with Retry-After, not a 500, nothing is left behind,
// and once space is back the same URL takes the file.
func TestUploadOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	f := newFixtureIn(t, dir)

	big := bytes.Repeat([]byte("x"), 2<<20)
	u, _ := f.signUpload(t, "org_full/file_big", "text/csv", int64(len(big)))
	r := f.put(t, u, "text/csv", big)
	if r.status != http.StatusServiceUnavailable || r.errorCode(t) != "unavailable" || r.header.Get("Retry-After") != "30" {
		t.Fatalf("PUT of 2 MiB into a 1 MiB file system = %d %s, Retry-After %q; want 503 unavailable, Retry-After 30",
			r.status, r.body, r.header.Get("Retry-After"))
	}
	if got := f.files(t); len(got) != 0 {
		t.Fatalf("after the refused upload the bucket holds %v; want nothing", got)
	}

	// Space comes back (a bigger file system at the same place): the same
	// URL works, since nothing was stored.
	if out, err := exec.Command("mount", "-o", "remount,size=8m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	if r := f.put(t, u, "text/csv", big); r.status != http.StatusOK {
		t.Fatalf("PUT after space came back = %d %s; want 200", r.status, r.body)
	}
	if got := f.stored(t, "org_full/file_big"); !bytes.Equal(got, big) {
		t.Fatalf("stored %d bytes; want the 2 MiB sent", len(got))
	}
}
