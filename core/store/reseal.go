package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// resealWebhookSecrets encrypts with the current key every webhook secret
// still in clear (rows written before secrets were encrypted) or under a
// former key (after a rotation of the master key), deleted webhooks
// included. Open runs it at start; it is idempotent, and replicas starting
// together do not step on each other: each UPDATE applies only if the
// column still holds what was read.
func (o *ops) resealWebhookSecrets(ctx context.Context, log *slog.Logger) error {
	if o.keys == nil {
		return nil
	}
	rows, err := o.write.QueryContext(ctx, `SELECT id, secret, previous_secret FROM webhooks`)
	if err != nil {
		return fmt.Errorf("store: reading webhook secrets to encrypt: %w", err)
	}
	type stale struct{ id, column, value string }
	var todo []stale
	for rows.Next() {
		var id, secret string
		var previous sql.NullString
		if err := rows.Scan(&id, &secret, &previous); err != nil {
			rows.Close()
			return fmt.Errorf("store: reading webhook secrets to encrypt: %w", err)
		}
		for _, c := range []stale{{id, "secret", secret}, {id, "previous_secret", previous.String}} {
			if c.value != "" && !o.sealedWithCurrent(c.value) {
				todo = append(todo, c)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: reading webhook secrets to encrypt: %w", err)
	}
	done := 0
	for _, c := range todo {
		aad := webhookAAD(c.id, c.column)
		plain, err := o.keys.openString(c.value, aad)
		if err != nil {
			return fmt.Errorf("store: webhook %s %s: %w", c.id, c.column, err)
		}
		sealed, err := o.keys.sealString(plain, aad)
		if err != nil {
			return err
		}
		// The column name comes from the list above, never from input.
		res, err := o.write.ExecContext(ctx, `UPDATE webhooks SET `+c.column+` = $1 WHERE id = $2 AND `+c.column+` = $3`,
			sealed, c.id, c.value)
		n, err := affected(res, err)
		if err != nil {
			return fmt.Errorf("store: encrypting the secret of webhook %s: %w", c.id, err)
		}
		done += int(n)
	}
	if done > 0 {
		log.Info("store: webhook secrets encrypted with the current key", slog.Int("count", done), slog.String("key_id", o.keys.CurrentID()))
	}
	return nil
}

// sealedWithCurrent reports whether a stored value is encrypted with the
// key that encrypts now.
func (o *ops) sealedWithCurrent(v string) bool {
	return isSealed(v) && len(v) > len(sealedPrefix)+len(o.keys.CurrentID()) &&
		v[len(sealedPrefix):len(sealedPrefix)+len(o.keys.CurrentID())+1] == o.keys.CurrentID()+":"
}
