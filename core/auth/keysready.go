package auth

import "context"

// KeysReady reports whether the Verifier can check signatures, for
// readiness: nil with an in-process key set (Options.KeySet) or once the
// issuer's JWKS has been fetched; otherwise it fetches it (at most once per
// MinRefetchInterval, sharing a fetch in flight) and returns an error
// wrapping ErrKeysUnavailable when that fails or ctx ends first. Keys
// fetched once keep it nil: a failed refresh keeps serving the cached ones.
func (v *Verifier) KeysReady(ctx context.Context) error {
	if v.remote == nil {
		return nil
	}
	_, err := v.remote.keys(ctx, "")
	return err
}
