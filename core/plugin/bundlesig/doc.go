// Package bundlesig reads, writes and verifies detached bundle signatures
// in the minisign format (https://jedisct1.github.io/minisign/), so a
// partner can sign a bundle either with `kadu plugins sign` or with the
// minisign tool itself.
//
// It owns the three minisign encodings Kadu uses (public key, unencrypted
// secret key, prehashed "ED" signature), the signed statement carried in
// the signature's trusted comment, and the keyring of trusted keys. It
// verifies signatures only: it does not read files, load bundles or decide
// whether a signature is required (core/plugin does).
//
// What a signature covers: minisign signs the BLAKE2b-512 hash of the
// module, and signs again the first signature together with the trusted
// comment. Kadu's trusted comment is a statement naming the bundle, its
// manifest version and the module's sha256:
//
//	kadu-bundle name=<name> version=<version> sha256=<hex>
//
// so a signature verifies only for these exact bytes (the module
// signature) and for this bundle name and version (the trusted comment,
// bound by the global signature). A signature made for another module,
// another bundle or another version of the same bundle is refused.
package bundlesig
