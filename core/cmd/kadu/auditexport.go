package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/store"
)

// exportedEvent is one line of `kadu audit export`: every field of the
// stored event, always present (empty strings, 0 and [] rather than
// missing), so that a line reads the same whatever it records. The names
// and forms are those the hash covers; they are documented in docs/audit.md#exporting; changing one breaks the
// auditors' tools that read them.
type exportedEvent struct {
	ID         string   `json:"id"`
	OrgID      string   `json:"org_id"` // "" for the installation's chain
	Seq        int64    `json:"seq"`
	OccurredAt string   `json:"occurred_at"` // exportTimeFormat
	Action     string   `json:"action"`
	Surface    string   `json:"surface"`
	Issuer     string   `json:"issuer"`
	Subject    string   `json:"subject"`
	Role       string   `json:"role"`
	Scopes     []string `json:"scopes"`
	ClientID   string   `json:"client_id"`
	ClientName string   `json:"client_name"`
	Tool       string   `json:"tool"`
	Route      string   `json:"route"`
	ResourceID string   `json:"resource_id"`
	ArgsDigest string   `json:"args_digest"`
	Outcome    string   `json:"outcome"`
	Status     int      `json:"status"`
	Detail     string   `json:"detail"`
	RequestID  string   `json:"request_id"`
	TraceID    string   `json:"trace_id"`
	PrevHash   string   `json:"prev_hash"`
	Hash       string   `json:"hash"`
}

// exportTimeFormat is occurred_at as the hash covers it (UTC,
// microseconds, fixed width; docs/audit.md#the-hash), so that a line's
// hash can be recomputed from the line alone.
const exportTimeFormat = "2006-01-02T15:04:05.000000Z"

func exported(e store.AuditEvent) exportedEvent {
	scopes := e.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return exportedEvent{
		ID: e.ID, OrgID: e.OrgID, Seq: e.Seq, OccurredAt: e.OccurredAt.UTC().Format(exportTimeFormat), Action: e.Action, Surface: e.Surface,
		Issuer: e.Issuer, Subject: e.Subject, Role: e.Role, Scopes: scopes, ClientID: e.ClientID, ClientName: e.ClientName,
		Tool: e.Tool, Route: e.Route, ResourceID: e.ResourceID, ArgsDigest: e.ArgsDigest, Outcome: e.Outcome,
		Status: e.Status, Detail: e.Detail, RequestID: e.RequestID, TraceID: e.TraceID, PrevHash: e.PrevHash, Hash: e.Hash,
	}
}

func newAuditExportCmd() *cobra.Command {
	var (
		f     chainFlags
		since string
	)
	cmd := &cobra.Command{
		Use:   "export (--org ID | --installation) [--since TIME]",
		Short: "Write a chain's audit events to stdout as JSON Lines",
		Long: `Write the audit events of one chain to stdout as JSON Lines, oldest first:
one JSON object per line, every field of the event (docs/audit.md#exporting
lists them), seq, prev_hash and hash included, so the export can be checked
on its own. --since keeps the events that occurred at or after a time: an
RFC 3339 time, or a duration back from now (720h = the last 30 days).`,
		Example: `  kadu audit export --org org_123 > org_123.jsonl
  kadu audit export --org org_123 --since 720h
  kadu audit export --installation --since 2026-01-01T00:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			org, one, err := f.chain(cmd)
			if err != nil {
				return err
			}
			if !one {
				return errors.New("--org or --installation: required, the chain to export")
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			db, err := openAuditStore(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			w := bufio.NewWriter(cmd.OutOrStdout())
			enc := json.NewEncoder(w) // one object and "\n" per Encode: a JSON Lines record
			enc.SetEscapeHTML(false)
			err = db.ExportAudit(cmd.Context(), org, from, func(e store.AuditEvent) error {
				return enc.Encode(exported(e))
			})
			if err != nil {
				_ = w.Flush()
				return fmt.Errorf("exporting the audit chain of %s: %w", chainName(org), err)
			}
			return w.Flush()
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&since, "since", "",
		"keep events at or after this time: RFC 3339 (2026-01-02T15:04:05Z) or a duration back from now (720h)")
	addConfigFlags(cmd, sharedConfigFlags)
	return cmd
}

// parseSince reads --since: empty (every event), an RFC 3339 time, or a
// positive duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z, "+
			"or a positive duration back from now such as 720h", s)
	}
	return now.Add(-d), nil
}
