package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// OpenStore opens the store cfg names as it is (no migration, no
// resealing) with the secret keys the server uses, for commands that read
// it without serving: `kadu audit` checks the signed checkpoints of purged
// chains, whose key is derived from those keys. It never generates a key:
// one made up here would report every checkpoint as untrusted. The caller
// closes it.
func OpenStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (*store.DB, error) {
	master, path, err := existingSigningKey(cfg)
	if err != nil {
		return nil, err
	}
	if master == nil {
		return nil, fmt.Errorf("no API signing key: set api.signing_key (KADU_API_SIGNING_KEY) as the server has it, "+
			"or point --data-dir at the server's data directory (it keeps the key in %s); "+
			"the key signs the audit trail's checkpoints, so a new one would not verify them", path)
	}
	keys, err := secretKeys(cfg, master)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, store.Options{Driver: cfg.Store.Driver, DSN: cfg.StoreDSN(), Logger: log, SecretKeys: keys,
		IdempotencyLock: idempotencyLock(cfg), Inspect: true})
	if err != nil {
		return nil, fmt.Errorf("store (%s %s): %w", cfg.Store.Driver, config.RedactDSN(cfg.StoreDSN()), err)
	}
	return db, nil
}
