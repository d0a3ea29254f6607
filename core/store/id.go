package store

import (
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// ID prefixes (docs/reference/rest.md#wire-forms). An id is the prefix followed by the 32 lowercase
// hex digits of a UUIDv7, e.g. "tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d".
const (
	PrefixTask      = "tsk_"
	PrefixExecution = "exe_"
	PrefixFile      = "file_"
	PrefixWebhook   = "whk_"
	PrefixEvent     = "evt_"
	PrefixDelivery  = "dlv_"
	PrefixApproval  = "apr_"
	PrefixStep      = "stp_"
	PrefixRequest   = "req_"
)

// NewID returns prefix followed by a new UUIDv7 in hex, without hyphens, so
// that a double click selects the whole id.
//
// UUIDv7 starts with the millisecond timestamp and google/uuid keeps ids
// strictly increasing within a process, so ids of one kind sort by creation
// time: the store pages newest first by comparing ids (keyset pagination).
// Ids minted by different replicas in the same millisecond may interleave.
// NewID is safe for concurrent use.
func NewID(prefix string) string {
	u := uuid.Must(uuid.NewV7()) // fails only if the system random source does, which crashes Go first
	var b strings.Builder
	b.Grow(len(prefix) + 32)
	b.WriteString(prefix)
	b.WriteString(hex.EncodeToString(u[:]))
	return b.String()
}

// ValidID reports whether s has the shape NewID(prefix) produces. Handlers
// use it to answer 404 for a malformed id without a query.
func ValidID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
