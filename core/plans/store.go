package plans

import (
	"context"
	"errors"
	"fmt"

	"github.com/kobana/kadu/core/store"
)

// StoreLookup is the Lookup over the organisations table of db: a missing
// organisation is ErrNoOrganisation.
func StoreLookup(db *store.DB) Lookup {
	return func(ctx context.Context, orgID string) (string, error) {
		o, err := db.GetOrg(ctx, orgID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "", fmt.Errorf("%w: %w", ErrNoOrganisation, err)
		case err != nil:
			return "", fmt.Errorf("loading organisation: %w", err)
		}
		return o.Plan, nil
	}
}
