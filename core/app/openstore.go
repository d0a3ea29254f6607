package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// OpenStore opens (and migrates) the store cfg names with the secret keys
// the server uses, for commands that read it without serving: `kadu audit`
// checks the signed checkpoints of purged chains, whose key is derived from
// those keys, so it must open the store exactly as the server does. The
// caller closes it.
func OpenStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (*store.DB, error) {
	master, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	keys, err := secretKeys(cfg, master)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, store.Options{Driver: cfg.Store.Driver, DSN: cfg.StoreDSN(), Logger: log, SecretKeys: keys,
		IdempotencyLock: idempotencyLock(cfg)})
	if err != nil {
		return nil, fmt.Errorf("store (%s %s): %w", cfg.Store.Driver, config.RedactDSN(cfg.StoreDSN()), err)
	}
	return db, nil
}
