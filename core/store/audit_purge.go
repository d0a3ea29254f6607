package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Retention of the audit trail (docs/audit.md#retention): a purge deletes
// the oldest events of a chain and leaves a checkpoint of the last one it
// deleted (its seq and hash) signed with Ed25519, so that verification
// starts from the checkpoint instead of seq 1.

// auditPurgeBatch is how many events one transaction of PurgeAudit deletes:
// a small transaction holds the chain's head, and SQLite's single writer,
// only briefly.
const auditPurgeBatch = 1000

// Purpose labels of the checkpoint key: changing either makes existing
// checkpoints unverifiable.
const (
	checkpointKeyLabel  = "kadu/store/audit-checkpoint/ed25519/v1"
	checkpointSignLabel = "kadu audit checkpoint v1"
)

// deriveCheckpointKey derives the Ed25519 key that signs checkpoints from a
// master key (HKDF-SHA256 with its own label, as SecretKeys derives its
// encryption keys).
func deriveCheckpointKey(master []byte) (ed25519.PrivateKey, error) {
	seed, err := hkdf.Key(sha256.New, master, nil, checkpointKeyLabel, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("deriving the audit checkpoint key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// signCheckpoint signs cp with the current key.
func (k *SecretKeys) signCheckpoint(cp *AuditCheckpoint) {
	key := k.keys[0].checkpoint
	cp.PublicKey = bytes.Clone(key.Public().(ed25519.PublicKey))
	cp.Signature = ed25519.Sign(key, checkpointMessage(*cp))
}

// signedCheckpoint reports whether pub is the checkpoint key of one of k's
// master keys, current or former.
func (k *SecretKeys) signedCheckpoint(pub []byte) bool {
	for _, key := range k.keys {
		if bytes.Equal(key.checkpoint.Public().(ed25519.PublicKey), pub) {
			return true
		}
	}
	return false
}

func (o *ops) getAuditCheckpoint(ctx context.Context, q querier, orgID string) (*AuditCheckpoint, error) {
	cp := AuditCheckpoint{OrgID: orgID}
	var pub, sig string
	err := q.QueryRowContext(ctx, `SELECT seq, hash, public_key, signature, created_at FROM audit_checkpoints
		WHERE org_id = $1`, orgID).Scan(&cp.Seq, &cp.Hash, &pub, &sig, timeCol{&cp.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the checkpoint of the audit chain of %q: %w", orgID, err)
	}
	// Undecodable text is kept empty: the signature then fails to verify,
	// which is the finding to report.
	cp.PublicKey, _ = base64.RawURLEncoding.DecodeString(pub)
	cp.Signature, _ = base64.RawURLEncoding.DecodeString(sig)
	return &cp, nil
}

// GetAuditCheckpoint returns orgID's checkpoint, or nil when nothing was
// ever purged from its chain.
func (o *ops) GetAuditCheckpoint(ctx context.Context, orgID string) (*AuditCheckpoint, error) {
	return o.getAuditCheckpoint(ctx, o.read, orgID)
}

// PurgeAudit deletes the oldest of orgID's events, those that occurred
// before cutoff up to the first that did not (the chain stays a contiguous
// run from the checkpoint), and returns how many it deleted. It deletes in
// batches, each in one transaction with the signed checkpoint of the last
// event it deleted, so that the chain verifies after every batch. It
// refuses a chain that does not verify (the error wraps the *AuditBreak):
// purging would hide the break. It needs SecretKeys to sign.
func (o *ops) PurgeAudit(ctx context.Context, orgID string, cutoff time.Time) (int64, error) {
	if o.keys == nil {
		return 0, errors.New("store: PurgeAudit: no SecretKeys to sign the checkpoint with")
	}
	// The last seq to delete: just before the first event at or after
	// cutoff, or the last event when all are older.
	var first, end sql.NullInt64
	err := o.read.QueryRowContext(ctx, `SELECT (SELECT MIN(seq) FROM audit_events WHERE org_id = $1), COALESCE(
			(SELECT MIN(seq) - 1 FROM audit_events WHERE org_id = $1 AND occurred_at >= $2),
			(SELECT MAX(seq) FROM audit_events WHERE org_id = $1))`, orgID, o.d.timeArg(cutoff)).Scan(&first, &end)
	if err != nil {
		return 0, fmt.Errorf("purging the audit chain of %q: %w", orgID, err)
	}
	if !first.Valid || !end.Valid || end.Int64 < first.Int64 {
		return 0, nil // nothing is old enough: the common case, every minute
	}
	// What the purge would hide must verify, and so must the link from it to
	// the first event that stays; the rest of the chain is not its business
	// (kadu audit verify's), which keeps a purge's cost to what it deletes.
	if _, brk, err := o.verifyAuditTo(ctx, orgID, end.Int64+1); err != nil {
		return 0, err
	} else if brk != nil {
		return 0, fmt.Errorf("store: refusing to purge the audit chain of %q: %w", orgID, brk)
	}
	var total int64
	for end.Valid {
		var n int64
		var done bool
		err := o.inTx(withoutPending(ctx), func(q querier) error {
			var err error
			n, done, err = o.purgeAuditBatch(ctx, q, orgID, end.Int64)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if done {
			break
		}
	}
	return total, nil
}

// purgeAuditBatch deletes up to auditPurgeBatch events of orgID's chain, not
// past seq end, and moves the checkpoint to the last of them. done reports
// that nothing up to end remains.
func (o *ops) purgeAuditBatch(ctx context.Context, q querier, orgID string, end int64) (n int64, done bool, err error) {
	// Hold the chain's head, as an append does: purges of one chain take
	// turns, and each reads what the one before committed.
	if _, err := q.ExecContext(ctx, `UPDATE audit_heads SET last_seq = last_seq WHERE org_id = $1`, orgID); err != nil {
		return 0, false, fmt.Errorf("purging the audit chain of %q: %w", orgID, err)
	}
	var first sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MIN(seq) FROM audit_events WHERE org_id = $1`, orgID).Scan(&first); err != nil {
		return 0, false, fmt.Errorf("purging the audit chain of %q: %w", orgID, err)
	}
	if !first.Valid || first.Int64 > end {
		return 0, true, nil
	}
	last := min(end, first.Int64+auditPurgeBatch-1)
	cp := AuditCheckpoint{OrgID: orgID, Seq: last, CreatedAt: o.clock()}
	err = q.QueryRowContext(ctx, `SELECT hash FROM audit_events WHERE org_id = $1 AND seq = $2`, orgID, last).Scan(&cp.Hash)
	if err != nil {
		return 0, false, fmt.Errorf("purging the audit chain of %q up to seq %d: %w", orgID, last, err)
	}
	res, err := q.ExecContext(ctx, `DELETE FROM audit_events WHERE org_id = $1 AND seq <= $2`, orgID, last)
	if err != nil {
		return 0, false, fmt.Errorf("purging the audit chain of %q up to seq %d: %w", orgID, last, err)
	}
	if n, err = res.RowsAffected(); err != nil {
		return 0, false, fmt.Errorf("purging the audit chain of %q: %w", orgID, err)
	}
	o.keys.signCheckpoint(&cp)
	_, err = q.ExecContext(ctx, `INSERT INTO audit_checkpoints (org_id, seq, hash, public_key, signature, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (org_id) DO UPDATE SET seq = $2, hash = $3, public_key = $4, signature = $5, created_at = $6
		WHERE audit_checkpoints.seq < $2`,
		orgID, cp.Seq, cp.Hash, base64.RawURLEncoding.EncodeToString(cp.PublicKey),
		base64.RawURLEncoding.EncodeToString(cp.Signature), o.d.timeArg(cp.CreatedAt))
	if err != nil {
		return 0, false, fmt.Errorf("writing the checkpoint of the audit chain of %q: %w", orgID, err)
	}
	return n, last == end, nil
}
