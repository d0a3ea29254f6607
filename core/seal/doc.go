// Package seal turns small JSON values into opaque, URL-safe strings that
// only the server can read and that nobody can alter: AES-256-GCM under a
// key ring, bound to a purpose, refused once expired or oversized. It also
// derives every per-use key from a master key, with one scheme (HKDF-SHA256,
// RFC 5869).
//
// It owns the sealed format (base64url without padding of the GCM nonce
// followed by the ciphertext of the value's JSON; the purpose is the
// additional data) and key derivation. It does not decide what a value
// binds to (caller, call, arguments): each user checks its own claims after
// Open. It must not log or return what it opens in an error.
package seal
