package store

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Verification of a chain (docs/audit.md#verifying): from the checkpoint
// (or seq 1 and an empty hash) to the head row, every event must come next
// in seq, carry the hash of the one before, and hash to its own hash; the
// last must be the one the head row names.

// Reasons VerifyAudit names, in the order it checks them.
const (
	AuditReasonCheckpoint = "checkpoint signature does not verify (forged or altered checkpoint)"
	AuditReasonUntrusted  = "checkpoint signed by a key that is not among the store's keys"
	AuditReasonMissing    = "missing (deleted)"
	AuditReasonSeq        = "seq out of order (reordered or duplicated)"
	AuditReasonPrevHash   = "previous hash does not match the event before (reordered, replaced or inserted)"
	AuditReasonHash       = "hash does not match the event's contents (edited)"
	AuditReasonTruncated  = "missing (deleted): the chain's head names a later event (truncated tail)"
	AuditReasonHead       = "the chain's head disagrees with its last event (rewritten tail)"
	AuditReasonNoHead     = "the chain has events but no head row (head deleted)"
	AuditReasonPastHead   = "events past the chain's head (head rolled back to hide them)"
)

// auditHead is a chain's head row.
type auditHead struct {
	seq  int64
	hash string
}

func (o *ops) getAuditHead(ctx context.Context, q querier, orgID string) (*auditHead, error) {
	var h auditHead
	err := q.QueryRowContext(ctx, `SELECT last_seq, last_hash FROM audit_heads WHERE org_id = $1`, orgID).Scan(&h.seq, &h.hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the head of the audit chain of %q: %w", orgID, err)
	}
	return &h, nil
}

// VerifyAudit recomputes orgID's chain from its checkpoint (if any) to its
// head and returns the number of events checked, and an *AuditBreak naming
// the first broken link (its Reason is one of the AuditReason… constants),
// or nil. Events appended while it runs, after the head it read first, are
// left for the next verification.
func (o *ops) VerifyAudit(ctx context.Context, orgID string) (checked int64, brk *AuditBreak, err error) {
	return o.verifyAuditTo(ctx, orgID, 0)
}

// verifyAuditTo is VerifyAudit up to seq upTo (0: the head). A purge
// verifies only what it would hide and the link to what stays, so that its
// cost follows what it deletes rather than the chain's length.
func (o *ops) verifyAuditTo(ctx context.Context, orgID string, upTo int64) (checked int64, brk *AuditBreak, err error) {
	// A purge running meanwhile moves the checkpoint and deletes the events
	// it covered between the reads below: a break found then is verified
	// again from the new checkpoint before it is reported.
	for attempt := 0; ; attempt++ {
		var cpSeq int64
		checked, brk, cpSeq, err = o.verifyAudit(ctx, orgID, upTo)
		if err != nil || brk == nil || attempt == 2 {
			return checked, brk, err
		}
		cp, err := o.getAuditCheckpoint(ctx, o.read, orgID)
		if err != nil {
			return checked, brk, err
		}
		if cp == nil || cp.Seq == cpSeq {
			return checked, brk, nil
		}
	}
}

// verifyAudit is one pass of verifyAuditTo; cpSeq is the seq of the
// checkpoint it started from (0 for none).
func (o *ops) verifyAudit(ctx context.Context, orgID string, upTo int64) (checked int64, brk *AuditBreak, cpSeq int64, err error) {
	head, err := o.getAuditHead(ctx, o.read, orgID)
	if err != nil {
		return 0, nil, 0, err
	}
	cp, err := o.getAuditCheckpoint(ctx, o.read, orgID)
	if err != nil {
		return 0, nil, 0, err
	}
	broken := func(seq int64, id, reason string) *AuditBreak {
		return &AuditBreak{OrgID: orgID, Seq: seq, ID: id, Reason: reason}
	}
	prev, next := "", int64(1)
	if cp != nil {
		if reason := o.checkCheckpoint(*cp); reason != "" {
			return 0, broken(cp.Seq, "", reason), cp.Seq, nil
		}
		prev, next, cpSeq = cp.Hash, cp.Seq+1, cp.Seq
	}
	// Up to the head read above: later events were appended after it.
	limit := int64(1<<63 - 1)
	if head != nil {
		limit = head.seq
	}
	whole := upTo <= 0 || upTo >= limit
	if !whole {
		limit = upTo
	}
	rows, err := o.read.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_events
		WHERE org_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`, orgID, next, limit)
	if err != nil {
		return 0, nil, cpSeq, fmt.Errorf("verifying the audit chain of %q: %w", orgID, err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return checked, nil, cpSeq, fmt.Errorf("verifying the audit chain of %q: %w", orgID, err)
		}
		switch {
		case e.Seq > next:
			return checked, broken(next, "", AuditReasonMissing), cpSeq, nil
		case e.Seq < next:
			return checked, broken(e.Seq, e.ID, AuditReasonSeq), cpSeq, nil
		case e.PrevHash != prev:
			return checked, broken(e.Seq, e.ID, AuditReasonPrevHash), cpSeq, nil
		case auditHash(e) != e.Hash:
			return checked, broken(e.Seq, e.ID, AuditReasonHash), cpSeq, nil
		}
		checked++
		prev, next = e.Hash, next+1
	}
	if err := rows.Err(); err != nil {
		return checked, nil, cpSeq, fmt.Errorf("verifying the audit chain of %q: %w", orgID, err)
	}
	last := next - 1
	switch {
	case head == nil && checked > 0:
		return checked, broken(last, "", AuditReasonNoHead), cpSeq, nil
	case head == nil:
		return checked, nil, cpSeq, nil
	case !whole && last < limit:
		return checked, broken(next, "", AuditReasonMissing), cpSeq, nil
	case !whole:
		return checked, nil, cpSeq, nil
	case head.seq > last:
		return checked, broken(next, "", AuditReasonTruncated), cpSeq, nil
	case head.hash != prev:
		return checked, broken(last, "", AuditReasonHead), cpSeq, nil
	}
	// An event past the head can only have been written around the append,
	// which moves both in one transaction: the head was rolled back to hide
	// the events after it. Reading the last seq before the head again keeps
	// an append committing meanwhile from looking like one.
	var maxSeq sql.NullInt64
	if err := o.read.QueryRowContext(ctx, `SELECT MAX(seq) FROM audit_events WHERE org_id = $1`, orgID).Scan(&maxSeq); err != nil {
		return checked, nil, cpSeq, fmt.Errorf("verifying the audit chain of %q: %w", orgID, err)
	}
	now, err := o.getAuditHead(ctx, o.read, orgID)
	if err != nil {
		return checked, nil, cpSeq, err
	}
	if now != nil && maxSeq.Valid && maxSeq.Int64 > now.seq {
		return checked, broken(now.seq+1, "", AuditReasonPastHead), cpSeq, nil
	}
	return checked, nil, cpSeq, nil
}

// AuditHead returns the last seq and hash of orgID's chain (0 and "" for
// a chain that has none): what an auditor records outside the database to
// catch a rewritten tail later (docs/audit.md#verifying).
func (o *ops) AuditHead(ctx context.Context, orgID string) (seq int64, hash string, err error) {
	h, err := o.getAuditHead(ctx, o.read, orgID)
	if err != nil || h == nil {
		return 0, "", err
	}
	return h.seq, h.hash, nil
}

// checkCheckpoint returns why cp cannot be trusted, or "".
func (o *ops) checkCheckpoint(cp AuditCheckpoint) string {
	if len(cp.PublicKey) != ed25519.PublicKeySize || !ed25519.Verify(cp.PublicKey, checkpointMessage(cp), cp.Signature) {
		return AuditReasonCheckpoint
	}
	// With no keys (tests) the signature alone is checked; with keys, it must
	// be one of them: anyone can sign with a key of their own.
	if o.keys != nil && !o.keys.signedCheckpoint(cp.PublicKey) {
		return AuditReasonUntrusted
	}
	return ""
}

// checkpointMessage is what a checkpoint's signature covers: a label naming
// the purpose, then the chain, seq and hash, one per line.
func checkpointMessage(cp AuditCheckpoint) []byte {
	return []byte(checkpointSignLabel + "\n" + cp.OrgID + "\n" + strconv.FormatInt(cp.Seq, 10) + "\n" + cp.Hash)
}
