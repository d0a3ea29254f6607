package config

import (
	"path/filepath"
	"strings"
)

// paths records which path keys the configuration file set, so that their
// relative values resolve against the file's directory: a server started by
// a service manager from "/" with --config /etc/kadu/kadu.yaml finds
// "plugins/tasks.wasm" beside its configuration. Values from the
// environment and flags are typed in a shell, so they stay relative to the
// working directory.
type paths struct {
	fileDir string          // absolute directory of the configuration file
	keys    map[string]bool // path keys whose value came from the file
}

// fromFile records the path keys among keys (flattened, as koanf lists
// them) that the file at path sets.
func (p *paths) fromFile(path string, keys []string) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return // the working directory is gone: keep resolving against it
	}
	p.fileDir = dir
	p.keys = map[string]bool{}
	for _, k := range keys {
		if isPathKey(k) {
			p.keys[k] = true
		}
	}
}

// overridden forgets the keys a later source (environment, flags) set.
func (p *paths) overridden(keys []string) {
	for _, k := range keys {
		delete(p.keys, k)
	}
}

// dir is the directory a relative value of key resolves against: the
// file's, or "" for the working directory.
func (p paths) dir(key string) string {
	if p.keys[key] {
		return p.fileDir
	}
	return ""
}

// isPathKey reports whether key holds a file system path: data_dir,
// store.dsn (a SQLite file; Store.normalize leaves URLs and other drivers
// alone), plugins.cache_dir and plugins.bundles.<name>.path. files.url is a
// URL and must be absolute (file:///dir).
func isPathKey(key string) bool {
	switch key {
	case "data_dir", "store.dsn", "plugins.cache_dir":
		return true
	}
	rest, ok := strings.CutPrefix(key, "plugins.bundles.")
	return ok && strings.HasSuffix(rest, ".path") && strings.Count(rest, ".") == 1
}
