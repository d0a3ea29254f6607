package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks
// specification serialises symmetric keys.
const SecretPrefix = "whsec_"

// Key sizes a secret may carry: the specification asks for at least 24 bytes
// (192 bits) and at most 64 (512 bits). NewSecret makes 32.
const (
	minKeyBytes = 24
	maxKeyBytes = 64
	newKeyBytes = 32
)

// NewSecret returns a fresh signing secret: "whsec_" followed by the standard
// base64 form of 32 random bytes. The API shows it once, when a webhook is
// created or its secret rotated.
func NewSecret() (string, error) {
	key := make([]byte, newKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generating webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the HMAC key of a whsec_ secret. Its error says what is
// wrong with the secret without repeating any of it.
func ParseSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, errors.New(`secret: must start with "whsec_"`)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		// base64's error is dropped: its byte offset helps nobody, and a
		// malformed secret may still be mostly a real one.
		return nil, errors.New(`secret: the part after "whsec_" must be standard base64 (with padding)`)
	}
	if len(key) < minKeyBytes || len(key) > maxKeyBytes {
		return nil, fmt.Errorf("secret: key is %d bytes, want %d to %d; generate a new one with NewSecret",
			len(key), minKeyBytes, maxKeyBytes)
	}
	return key, nil
}
