package kadu

import "github.com/kobana/kadu/sdk/go/kadu/internal/abi"

// Config returns the operator's configuration value for key in this
// bundle's config block, and whether it is set. It may be called at any
// time, init included. Values are configuration, never secrets: a bundle
// needs none to reach Kadu.
func Config(key string) (string, bool) {
	h := abi.Current()
	raw := readSized(func(buf []byte) int32 { return h.ConfigGet(key, buf) }, 128)
	if raw == nil {
		return "", false
	}
	return string(raw), true
}
