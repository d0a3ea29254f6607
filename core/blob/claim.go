package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// claimsDirName is the directory, inside a file bucket's directory, that
// holds one claim per key whose upload URL has been used. Keys come from
// core/api ("<org_id>/<file_id>", organisation ids never start with "."),
// so no key names it.
const claimsDirName = ".uploads"

// claims make a local upload URL single-use: before a PUT writes a byte,
// it creates the key's claim file with O_EXCL, which exactly one request
// wins, in this process or any other serving the same directory. The
// claim says "busy" while the body streams in and "done" once the blob is
// committed; a failed upload removes it, so the client may send again.
// A claim outlives its blob while the URL is still valid (see forget), so
// a file whose blob was deleted (a rejected upload) cannot be filled again
// through the same URL.
//
// A claims is safe for concurrent use; it holds no state but its path.
type claims struct {
	dir string // fixed at creation
}

// claimState is what take found.
type claimState int

const (
	claimTaken claimState = iota // the caller holds the claim now
	claimBusy                    // another upload to the key is streaming (or died without cleaning up)
	claimDone                    // an upload to the key was committed
)

// Contents of a claim file: the state word, then the URL's expiry in Unix
// seconds, e.g. "done 1785240000".
const (
	claimWordBusy = "busy"
	claimWordDone = "done"
)

func (c claims) path(key string) string {
	// Hashed: one flat directory, no escaping, and no key can reach
	// outside it whatever characters it has.
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:]))
}

// take creates key's claim exclusively, recording when its URL expires.
// It answers claimTaken only to the one caller that created the file.
func (c claims) take(key string, expires time.Time) (claimState, error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return 0, fmt.Errorf("creating the upload claims directory: %w", err)
	}
	p := c.path(key)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		word, _, _ := c.read(key)
		if word == claimWordDone {
			return claimDone, nil
		}
		return claimBusy, nil
	}
	if err != nil {
		return 0, fmt.Errorf("claiming upload of %q: %w", key, err)
	}
	_, werr := f.WriteString(claimLine(claimWordBusy, expires))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(p)
		return 0, fmt.Errorf("claiming upload of %q: %w", key, werr)
	}
	return claimTaken, nil
}

// done marks the claim of a committed upload. Only the holder calls it.
// A crash before it leaves "busy", which refuses later PUTs all the same.
func (c claims) done(key string, expires time.Time) error {
	if err := os.WriteFile(c.path(key), []byte(claimLine(claimWordDone, expires)), 0o600); err != nil {
		return fmt.Errorf("marking upload of %q done: %w", key, err)
	}
	return nil
}

// release removes the claim of an upload that stored nothing, so that the
// client may send the file again. Only the holder calls it.
func (c claims) release(key string) error {
	if err := os.Remove(c.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("releasing upload claim of %q: %w", key, err)
	}
	return nil
}

// forget removes key's claim once the URL it guards has expired (or the
// claim cannot be read): no request can use that URL any more, so the
// claim has nothing left to refuse. Before then it stays, so that deleting
// a blob does not reopen its upload URL; the next Delete of the key (the
// purge) removes it.
func (c claims) forget(key string, now time.Time) error {
	_, expires, err := c.read(key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err == nil && now.Before(expires):
		return nil
	}
	return c.release(key)
}

// read returns the state word and URL expiry of key's claim.
func (c claims) read(key string) (string, time.Time, error) {
	raw, err := os.ReadFile(c.path(key))
	if err != nil {
		return "", time.Time{}, err
	}
	word, secs, ok := strings.Cut(strings.TrimSpace(string(raw)), " ")
	n, perr := strconv.ParseInt(secs, 10, 64)
	if !ok || perr != nil {
		// Torn by a concurrent done (truncate, then write): busy, and
		// already expired for forget.
		return claimWordBusy, time.Time{}, errors.New("unreadable upload claim")
	}
	return word, time.Unix(n, 0), nil
}

func claimLine(word string, expires time.Time) string {
	return word + " " + strconv.FormatInt(expires.Unix(), 10) + "\n"
}
