package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// describeCacheDir is the directory, inside Options.CacheDir, of the
// describe cache. The suffix changes whenever what kadu_describe can see
// of the host changes (the answers of config_get, api and caller_info
// outside kadu_handle, the invocation input): entries written before then
// are simply never found again.
const describeCacheDir = "kadu-describe-v1"

// maxDescribeEntry caps a describe cache entry read back: a manifest is at
// most 1 MiB (sdk/ABI.md), and a larger file is not one this code wrote.
const maxDescribeEntry = 2 << 20

// describeCache keeps, on disk beside wazero's compilation cache, what
// kadu_describe answered for a module under a bundle configuration, so that
// a restart does not instantiate every bundle once more only to read the
// manifest it read last time.
//
// A hit is as trustworthy as describing again. The key is the module's
// sha256 (checked against the pin before the cache is consulted) and every
// input of kadu_describe the configuration controls (the settings
// config_get reads, the memory limit and the deadline it ran under): the
// same code, run on the same input, answered this. A new build has a new
// sha256 and is described, hot swaps included. The manifest read back is
// parsed and validated against the grant like a fresh one (parseManifest);
// only the guest's run is skipped. Whoever can write the cache directory can
// already replace the compiled machine code in wazero's cache next to it, so
// an entry there grants nothing new. Only a describe that succeeded, and a
// manifest that passed validation, is written; an entry that cannot be read
// or decoded is a miss.
//
// The zero value (no directory) caches nothing.
type describeCache struct {
	dir string
}

// describeEntry is one cache file.
type describeEntry struct {
	Manifest json.RawMessage `json:"manifest"`
	// Memory is the committed memory of the instance after kadu_describe:
	// the estimate every new instance reserves (version.memEstimate).
	Memory int64 `json:"memory"`
}

func newDescribeCache(cacheDir string) describeCache {
	if cacheDir == "" {
		return describeCache{}
	}
	return describeCache{dir: filepath.Join(cacheDir, describeCacheDir)}
}

// key names the entry of the module with sha256 sum under cfg.
func (c describeCache) key(sum string, cfg BundleConfig) string {
	// encoding/json writes map keys sorted: one text per configuration.
	in, _ := json.Marshal(struct {
		SHA256    string
		Config    map[string]string
		MemoryMiB int
		Timeout   time.Duration
	}{sum, cfg.Config, cfg.Limits.MemoryMiB, cfg.Limits.Timeout})
	h := sha256.Sum256(in)
	return hex.EncodeToString(h[:])
}

// get returns the entry for the module with sha256 sum under cfg; ok is
// false on a miss.
func (c describeCache) get(sum string, cfg BundleConfig) (e describeEntry, ok bool) {
	if c.dir == "" {
		return e, false
	}
	f, err := os.Open(filepath.Join(c.dir, c.key(sum, cfg)+".json"))
	if err != nil {
		return e, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > maxDescribeEntry {
		return e, false
	}
	raw := make([]byte, fi.Size())
	if _, err := f.ReadAt(raw, 0); err != nil {
		return e, false
	}
	if err := json.Unmarshal(raw, &e); err != nil || len(e.Manifest) == 0 || e.Memory < 0 {
		return describeEntry{}, false
	}
	return e, true
}

// put records e for the module with sha256 sum under cfg. Written to a
// temporary file and renamed, so a reader never sees half an entry.
func (c describeCache) put(sum string, cfg BundleConfig, e describeEntry) error {
	if c.dir == "" {
		return nil
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("describe cache: %w", err)
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("describe cache: %w", err)
	}
	name := filepath.Join(c.dir, c.key(sum, cfg)+".json")
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("describe cache: %w", err)
	}
	_, err = tmp.Write(raw)
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		if rmErr := os.Remove(tmp.Name()); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
		return fmt.Errorf("describe cache: %w", err)
	}
	return nil
}
