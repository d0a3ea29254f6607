package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Digest is the hex SHA-256 of the canonical form of a call's arguments,
// so that reordered members, or 1 and 1.0, digest alike. No arguments
// digest as {}: a call without arguments and one with an empty object are
// the same call. A sealed requestState carries it to bind the answer to
// the arguments it was asked for (docs/reference/confirmation.md).
func Digest(args json.RawMessage) (string, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	c, err := Transform(args)
	if err != nil {
		return "", fmt.Errorf("canonical arguments: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}
