package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Webhook is an endpoint an organisation registered to receive events
// (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#webhooks). It is not a wire type: core/api renders it, without the
// secrets. Values returned by the store belong to the caller.
//
// Secret and PreviousSecret are in clear here, because the worker signs
// every delivery with them; in the database they are encrypted with the
// DB's SecretKeys (Options.SecretKeys). Never log a Webhook with %v: its
// LogValue leaves the secrets out, fmt does not.
type Webhook struct {
	ID          string
	OrgID       string
	URL         string
	Description string
	EventCodes  []string // the codes it subscribes to; never nil after a read
	Status      WebhookStatus
	// DisabledReason says why Status is disabled ("" while enabled).
	DisabledReason string
	// Secret signs deliveries ("whsec_…").
	Secret string
	// PreviousSecret also signs deliveries until PreviousSecretExpiresAt,
	// so that a receiver can switch secrets without dropping any.
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	// FailingSince is the first failed attempt since the last successful
	// one; nil while deliveries succeed. Deliveries failing continuously
	// for long enough disable the webhook.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookStatus is whether a webhook receives deliveries.
type WebhookStatus string

// Webhook statuses.
const (
	WebhookEnabled  WebhookStatus = "enabled"
	WebhookDisabled WebhookStatus = "disabled"
)

// Subscribes reports whether w is enabled and subscribes to code.
func (w Webhook) Subscribes(code string) bool {
	return w.Status == WebhookEnabled && slices.Contains(w.EventCodes, code)
}

// Secrets returns the secrets deliveries are signed with at now: the
// current one, then the previous one while its overlap lasts.
func (w Webhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" && w.PreviousSecretExpiresAt != nil && w.PreviousSecretExpiresAt.After(now) {
		out = append(out, w.PreviousSecret)
	}
	return out
}

// LogValue leaves the secrets out of logs.
func (w Webhook) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", w.ID), slog.String("org_id", w.OrgID),
		slog.String("url", w.URL), slog.String("status", string(w.Status)))
}

// ErrWebhookLimit: CreateWebhook found the organisation already has as many
// webhooks as its plan allows. core/api answers 402 plan_limit_exceeded.
var ErrWebhookLimit = errors.New("store: webhook limit reached")

// WebhookPatch is a partial update of a webhook (PATCH /webhooks/{id}): nil
// fields are left as they are.
type WebhookPatch struct {
	URL         *string
	Description *string
	EventCodes  *[]string
	// Enabled true enables the webhook and forgets why it was disabled and
	// since when it was failing; false disables it with DisabledReason
	// ReasonDisabledByUser.
	Enabled *bool
}

// Why a webhook was disabled, when the store decides it.
const ReasonDisabledByUser = "Disabled by an admin of the organisation."

const webhookColumns = `id, org_id, url, description, event_codes, status, disabled_reason, secret,
	previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at`

func scanWebhook(s scanner) (Webhook, error) {
	var w Webhook
	err := s.Scan(&w.ID, &w.OrgID, &w.URL, &w.Description, jsonCol[[]string]{&w.EventCodes}, &w.Status,
		nullStringCol{&w.DisabledReason}, &w.Secret, nullStringCol{&w.PreviousSecret},
		nullTimeCol{&w.PreviousSecretExpiresAt}, nullTimeCol{&w.FailingSince},
		timeCol{&w.CreatedAt}, timeCol{&w.UpdatedAt})
	if w.EventCodes == nil {
		w.EventCodes = []string{}
	}
	return w, err
}

// webhookAAD binds an encrypted secret to its row and column.
func webhookAAD(id, column string) string { return "webhooks/" + id + "/" + column }

// openSecrets decrypts w's secrets as scanned.
func (o *ops) openSecrets(w *Webhook) error {
	var err1, err2 error
	w.Secret, err1 = o.keys.openString(w.Secret, webhookAAD(w.ID, "secret"))
	w.PreviousSecret, err2 = o.keys.openString(w.PreviousSecret, webhookAAD(w.ID, "previous_secret"))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("webhook %s: %w", w.ID, err)
	}
	return nil
}

// sealedSecrets returns w's secrets as they are stored.
func (o *ops) sealedSecrets(w Webhook) (secret, previous string, err error) {
	secret, err = o.keys.sealString(w.Secret, webhookAAD(w.ID, "secret"))
	if err != nil {
		return "", "", err
	}
	previous, err = o.keys.sealString(w.PreviousSecret, webhookAAD(w.ID, "previous_secret"))
	return secret, previous, err
}

// CreateWebhook stores a new enabled webhook for orgID from w's URL,
// Description, EventCodes and Secret (core/api validates them and makes the
// secret). The store sets everything else and returns the stored webhook.
//
// limit is the most webhooks the organisation may have (deleted ones do not
// count); at the limit it returns ErrWebhookLimit. limit < 0 means no
// limit. With a limit, concurrent creations in one organisation are
// serialised on the organisation's row, so the limit holds exactly; the
// organisation must then have been provisioned (EnsureOrg).
func (o *ops) CreateWebhook(ctx context.Context, orgID string, w Webhook, limit int) (Webhook, error) {
	if err := checkOrg(orgID); err != nil {
		return Webhook{}, err
	}
	if w.Secret == "" {
		return Webhook{}, errors.New("store: CreateWebhook: empty secret")
	}
	now := o.clock()
	out := Webhook{
		ID:          NewID(PrefixWebhook),
		OrgID:       orgID,
		URL:         w.URL,
		Description: w.Description,
		EventCodes:  w.EventCodes,
		Status:      WebhookEnabled,
		Secret:      w.Secret,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	if out.EventCodes == nil {
		out.EventCodes = []string{}
	}
	sealed, _, err := o.sealedSecrets(out)
	if err != nil {
		return Webhook{}, err
	}
	err = o.inTx(ctx, func(q querier) error {
		if limit >= 0 {
			// As in StartExecution: a no-op update locks the organisation's
			// row on PostgreSQL until the transaction ends.
			res, err := q.ExecContext(ctx, `UPDATE orgs SET plan = plan WHERE id = $1`, orgID)
			if err := oneRow(res, err, "organisation", orgID); err != nil {
				return err
			}
			n, err := countWebhooks(ctx, q, orgID)
			if err != nil {
				return err
			}
			if n >= limit {
				return fmt.Errorf("organisation %s has %d webhooks: %w", orgID, n, ErrWebhookLimit)
			}
		}
		noteCreated(ctx, out.ID)
		_, err := q.ExecContext(ctx, `INSERT INTO webhooks (id, org_id, url, description, event_codes, status,
			secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
			out.ID, orgID, out.URL, out.Description, mustJSON(out.EventCodes), string(out.Status), sealed,
			o.d.timeArg(now))
		if err != nil {
			return fmt.Errorf("creating webhook: %w", err)
		}
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return out, nil
}

// CountWebhooks returns how many webhooks orgID has, enabled or disabled:
// what the plan's webhooks limit counts.
func (o *ops) CountWebhooks(ctx context.Context, orgID string) (int, error) {
	if err := checkOrg(orgID); err != nil {
		return 0, err
	}
	return countWebhooks(ctx, o.read, orgID)
}

func countWebhooks(ctx context.Context, q querier, orgID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE org_id = $1 AND deleted_at IS NULL`, orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting webhooks of organisation %s: %w", orgID, err)
	}
	return n, nil
}

// GetWebhook returns the webhook id of orgID.
func (o *ops) GetWebhook(ctx context.Context, orgID, id string) (Webhook, error) {
	if err := checkOrg(orgID); err != nil {
		return Webhook{}, err
	}
	w, err := getWebhook(ctx, o.read, orgID, id)
	if err != nil {
		return Webhook{}, err
	}
	return w, o.openSecrets(&w)
}

func getWebhook(ctx context.Context, q querier, orgID, id string) (Webhook, error) {
	w, err := scanWebhook(q.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, fmt.Errorf("webhook %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("getting webhook %s: %w", id, err)
	}
	return w, nil
}

// ListWebhooks returns a page of orgID's webhooks, newest first.
func (o *ops) ListWebhooks(ctx context.Context, orgID string, p ListParams) (Page[Webhook], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[Webhook]{}, err
	}
	var a args
	conds := []string{"org_id = " + a.add(orgID), "deleted_at IS NULL"}
	if p.Before != "" {
		conds = append(conds, "id < "+a.add(p.Before))
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + webhookColumns + ` FROM webhooks` + where(conds) + ` ORDER BY id DESC LIMIT ` + a.add(limit+1)
	pg, err := listPage(ctx, o.read, query, a, limit, scanWebhook)
	for i := range pg.Items {
		if err == nil {
			err = o.openSecrets(&pg.Items[i])
		}
	}
	return pg, err
}

// UpdateWebhook applies patch to the webhook id of orgID and returns the
// result. Concurrent updates are applied one after the other.
func (o *ops) UpdateWebhook(ctx context.Context, orgID, id string, patch WebhookPatch) (Webhook, error) {
	return o.mutateWebhook(ctx, orgID, id, func(w *Webhook, now time.Time) {
		setIf(&w.URL, patch.URL)
		setIf(&w.Description, patch.Description)
		setIf(&w.EventCodes, patch.EventCodes)
		switch {
		case patch.Enabled == nil:
		case *patch.Enabled:
			w.Status, w.DisabledReason, w.FailingSince = WebhookEnabled, "", nil
		case w.Status == WebhookEnabled:
			w.Status, w.DisabledReason = WebhookDisabled, ReasonDisabledByUser
		}
	})
}

// RotateWebhookSecret makes secret the current secret of the webhook id of
// orgID. With previousExpiresAt, the current secret becomes the previous
// one and keeps signing deliveries until then; nil drops it at once. A
// previous secret of an earlier rotation is forgotten either way.
func (o *ops) RotateWebhookSecret(ctx context.Context, orgID, id, secret string, previousExpiresAt *time.Time) (Webhook, error) {
	if secret == "" {
		return Webhook{}, errors.New("store: RotateWebhookSecret: empty secret")
	}
	return o.mutateWebhook(ctx, orgID, id, func(w *Webhook, _ time.Time) {
		w.PreviousSecret, w.PreviousSecretExpiresAt = "", nil
		if previousExpiresAt != nil {
			t := previousExpiresAt.UTC().Truncate(time.Microsecond)
			w.PreviousSecret, w.PreviousSecretExpiresAt = w.Secret, &t
		}
		w.Secret = secret
	})
}

// MarkWebhookFailing records a failed delivery attempt at at: FailingSince
// becomes at unless it is already set. It returns the webhook as stored, so
// the caller can tell how long it has been failing.
func (o *ops) MarkWebhookFailing(ctx context.Context, orgID, id string, at time.Time) (Webhook, error) {
	return o.mutateWebhook(ctx, orgID, id, func(w *Webhook, _ time.Time) {
		if w.FailingSince == nil {
			t := at.UTC().Truncate(time.Microsecond)
			w.FailingSince = &t
		}
	})
}

// ClearWebhookFailing records a successful delivery: FailingSince becomes
// nil.
func (o *ops) ClearWebhookFailing(ctx context.Context, orgID, id string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	res, err := o.write.ExecContext(ctx, `UPDATE webhooks SET failing_since = NULL
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id)
	return oneRow(res, err, "webhook", id)
}

// DisableWebhook disables the enabled webhook id of orgID with reason and
// cancels its pending deliveries, in one transaction, and returns it. A
// webhook already disabled is ErrConflict, so that of concurrent callers
// exactly one disables it (and emits webhook.disabled).
func (o *ops) DisableWebhook(ctx context.Context, orgID, id, reason string) (Webhook, error) {
	if err := checkOrg(orgID); err != nil {
		return Webhook{}, err
	}
	var out Webhook
	err := o.inTx(ctx, func(q querier) error {
		now := o.clock()
		w, err := scanWebhook(q.QueryRowContext(ctx, `UPDATE webhooks SET status = $3, disabled_reason = $4, updated_at = $5
			WHERE org_id = $1 AND id = $2 AND status = $6 AND deleted_at IS NULL RETURNING `+webhookColumns,
			orgID, id, string(WebhookDisabled), reason, o.d.timeArg(now), string(WebhookEnabled)))
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := getWebhook(ctx, q, orgID, id); err != nil {
				return err
			}
			return fmt.Errorf("webhook %s is already disabled: %w", id, ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("disabling webhook %s: %w", id, err)
		}
		if err := o.openSecrets(&w); err != nil {
			return err
		}
		out = w
		return o.cancelPending(ctx, q, orgID, id, now)
	})
	return out, err
}

// SoftDeleteWebhook marks the webhook id of orgID deleted and cancels its
// pending deliveries: from then on it is ErrNotFound and receives nothing.
// Its delivery log stays until PurgeDeleted removes it with the webhook.
func (o *ops) SoftDeleteWebhook(ctx context.Context, orgID, id string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	return o.inTx(ctx, func(q querier) error {
		now := o.clock()
		res, err := q.ExecContext(ctx, `UPDATE webhooks SET deleted_at = $3, updated_at = $3
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id, o.d.timeArg(now))
		if err := oneRow(res, err, "webhook", id); err != nil {
			return err
		}
		return o.cancelPending(ctx, q, orgID, id, now)
	})
}

// mutateWebhook touches updated_at first, which on PostgreSQL locks the row
// until the transaction ends, then applies fn to the fresh row and writes
// the mutable columns back.
func (o *ops) mutateWebhook(ctx context.Context, orgID, id string, fn func(w *Webhook, now time.Time)) (Webhook, error) {
	if err := checkOrg(orgID); err != nil {
		return Webhook{}, err
	}
	var out Webhook
	err := o.inTx(ctx, func(q querier) error {
		now := o.clock()
		w, err := scanWebhook(q.QueryRowContext(ctx, `UPDATE webhooks SET updated_at = $3
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING `+webhookColumns,
			orgID, id, o.d.timeArg(now)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("updating webhook %s: %w", id, err)
		}
		if err := o.openSecrets(&w); err != nil {
			return err
		}
		fn(&w, now)
		if w.EventCodes == nil {
			w.EventCodes = []string{}
		}
		secret, previous, err := o.sealedSecrets(w)
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `UPDATE webhooks SET url = $3, description = $4, event_codes = $5, status = $6,
			disabled_reason = $7, secret = $8, previous_secret = $9, previous_secret_expires_at = $10,
			failing_since = $11
			WHERE org_id = $1 AND id = $2`,
			orgID, id, w.URL, w.Description, mustJSON(w.EventCodes), string(w.Status),
			nullStringArg(w.DisabledReason), secret, nullStringArg(previous),
			o.d.nullTimeArg(w.PreviousSecretExpiresAt), o.d.nullTimeArg(w.FailingSince))
		if err != nil {
			return fmt.Errorf("updating webhook %s: %w", id, err)
		}
		out = w
		return nil
	})
	return out, err
}

// subscribers returns orgID's enabled webhooks that subscribe to code. The
// store never looks inside JSON in SQL (RATIONALE.md); an organisation has
// a handful of webhooks, so they are filtered here.
func subscribers(ctx context.Context, q querier, orgID, code string) ([]Webhook, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE org_id = $1 AND status = $2 AND deleted_at IS NULL ORDER BY id`, orgID, string(WebhookEnabled))
	if err != nil {
		return nil, fmt.Errorf("listing webhooks of organisation %s: %w", orgID, err)
	}
	defer rows.Close()
	var out []Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("listing webhooks of organisation %s: %w", orgID, err)
		}
		if w.Subscribes(code) {
			out = append(out, w)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing webhooks of organisation %s: %w", orgID, err)
	}
	return out, nil
}

// purgeWebhooks is PurgeDeleted's share for webhooks: webhooks deleted
// before before with their delivery log, finished deliveries created before
// before (the log is kept as long as deleted rows are), and the events
// left without deliveries. Attempts go with their delivery (ON DELETE
// CASCADE).
func purgeWebhooks(ctx context.Context, q querier, before any, p *Purged) error {
	res, err := q.ExecContext(ctx, `DELETE FROM deliveries WHERE
		webhook_id IN (SELECT id FROM webhooks WHERE deleted_at IS NOT NULL AND deleted_at < $1)
		OR (status <> $2 AND created_at < $1)`, before, string(DeliveryPending))
	if p.Deliveries, err = affected(res, err); err != nil {
		return fmt.Errorf("purging deliveries: %w", err)
	}
	res, err = q.ExecContext(ctx, `DELETE FROM events WHERE created_at < $1
		AND NOT EXISTS (SELECT 1 FROM deliveries WHERE deliveries.event_id = events.id)`, before)
	if p.Events, err = affected(res, err); err != nil {
		return fmt.Errorf("purging events: %w", err)
	}
	res, err = q.ExecContext(ctx, `DELETE FROM webhooks WHERE deleted_at IS NOT NULL AND deleted_at < $1`, before)
	if p.Webhooks, err = affected(res, err); err != nil {
		return fmt.Errorf("purging webhooks: %w", err)
	}
	return nil
}
