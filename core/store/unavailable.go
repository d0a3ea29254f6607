package store

import (
	"context"
	"errors"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrUnavailable is what Unavailable errors match under errors.Is: the
// storage cannot take the operation now (disk or quota full, I/O error,
// database out of resources or unreachable). The request was fine; a retry
// later may succeed. core/api answers 503 unavailable with Retry-After.
var ErrUnavailable = errors.New("store: storage unavailable")

// Kinds of storage unavailability, as Classify names them. They are stable:
// logs, readiness and the API's reason field carry them.
const (
	KindDiskFull    = "disk_full"        // SQLITE_FULL, SQLSTATE 53100, ENOSPC, EDQUOT
	KindIO          = "io_error"         // SQLITE_IOERR, EIO
	KindResources   = "out_of_resources" // SQLSTATE 53xxx other than 53100 (memory, connections)
	KindUnreachable = "unreachable"      // SQLSTATE 08xxx, refused or reset connections
	kindUnavailable = "unavailable"      // ErrUnavailable itself, wrapped by someone
)

// Unavailable reports whether err, anywhere in its chain, says the storage
// cannot take writes or cannot be reached right now — as opposed to a bad
// request or a bug. See Classify.
func Unavailable(err error) bool { return Classify(err) != "" }

// Classify returns the kind of storage unavailability err carries (one of
// the Kind constants), or "" when err is something else: SQLite's
// SQLITE_FULL and SQLITE_IOERR (modernc.org/sqlite result codes, extended
// codes included), PostgreSQL's class 53 "insufficient resources" (53100
// disk_full) and class 08 "connection exception", a failed connection to
// PostgreSQL, and the errnos ENOSPC, EDQUOT and EIO from a local write (a
// blob directory). Context cancellation is never unavailability: the caller
// gave up.
func Classify(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return ""
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return KindDiskFull
		case sqlite3.SQLITE_IOERR:
			return KindIO
		}
		return ""
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pgKind(pe.Code)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return KindUnreachable
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return KindDiskFull
	case errors.Is(err, syscall.EIO):
		return KindIO
	case errors.Is(err, ErrUnavailable):
		return kindUnavailable
	}
	return ""
}

// pgKind classifies a SQLSTATE.
func pgKind(code string) string {
	switch {
	case code == "53100":
		return KindDiskFull
	case strings.HasPrefix(code, "53"):
		return KindResources
	case strings.HasPrefix(code, "08"):
		return KindUnreachable
	case code == "58030": // io_error
		return KindIO
	}
	return ""
}

// ClassifyText is Classify for an error that only survives as text: the
// job queue (River) logs its errors as strings. It recognises the messages
// of the same conditions Classify does, and returns "" for anything else.
func ClassifyText(s string) string {
	switch {
	case strings.Contains(s, "database or disk is full"),
		strings.Contains(s, "SQLSTATE 53100"),
		strings.Contains(s, "no space left on device"),
		strings.Contains(s, "disk quota exceeded"):
		return KindDiskFull
	case strings.Contains(s, "disk I/O error"), strings.Contains(s, "SQLSTATE 58030"):
		return KindIO
	case strings.Contains(s, "SQLSTATE 53"):
		return KindResources
	case strings.Contains(s, "SQLSTATE 08"), strings.Contains(s, "failed to connect to"):
		return KindUnreachable
	case strings.Contains(s, ErrUnavailable.Error()):
		return kindUnavailable
	}
	return ""
}
