package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Org is an organisation as the store knows it: provisioned on first sight
// from a verified token. What its plan allows is configuration, not data.
type Org struct {
	ID        string
	Plan      string // a plan name from config
	CreatedAt time.Time
}

// checkOrg refuses an empty organisation id, so that no statement can run
// unscoped by mistake.
func checkOrg(orgID string) error {
	if orgID == "" {
		return errors.New("store: empty organisation id")
	}
	return nil
}

// EnsureOrg returns the organisation orgID, provisioning it with plan if this
// is the first time it is seen (created is then true). Concurrent first
// sights create one row: exactly one caller gets created == true, and all
// get the same Org. An existing organisation keeps its plan.
func (o *ops) EnsureOrg(ctx context.Context, orgID, plan string) (org Org, created bool, err error) {
	ctx = withoutPending(ctx) // bookkeeping of the request, not the change an audit record describes
	if err := checkOrg(orgID); err != nil {
		return Org{}, false, err
	}
	if plan == "" {
		return Org{}, false, errors.New("store: EnsureOrg: empty plan")
	}
	res, err := o.write.ExecContext(ctx,
		`INSERT INTO orgs (id, plan, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		orgID, plan, o.d.timeArg(o.clock()))
	if err != nil {
		return Org{}, false, fmt.Errorf("provisioning organisation %s: %w", orgID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Org{}, false, fmt.Errorf("provisioning organisation %s: %w", orgID, err)
	}
	org, err = getOrg(ctx, o.write, orgID)
	return org, n == 1, err
}

// GetOrg returns the organisation orgID, or ErrNotFound if it was never
// provisioned.
func (o *ops) GetOrg(ctx context.Context, orgID string) (Org, error) {
	if err := checkOrg(orgID); err != nil {
		return Org{}, err
	}
	return getOrg(ctx, o.read, orgID)
}

func getOrg(ctx context.Context, q querier, orgID string) (Org, error) {
	var org Org
	err := q.QueryRowContext(ctx, `SELECT id, plan, created_at FROM orgs WHERE id = $1`, orgID).
		Scan(&org.ID, &org.Plan, timeCol{&org.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return Org{}, fmt.Errorf("organisation %s: %w", orgID, ErrNotFound)
	}
	if err != nil {
		return Org{}, fmt.Errorf("getting organisation %s: %w", orgID, err)
	}
	return org, nil
}

// PlanOf returns the name of the plan organisation orgID is on; found is
// false when it was never provisioned. It is the lookup of core/plans'
// resolver (plans.Lookup).
func (o *ops) PlanOf(ctx context.Context, orgID string) (plan string, found bool, err error) {
	org, err := o.GetOrg(ctx, orgID)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return org.Plan, true, nil
}
