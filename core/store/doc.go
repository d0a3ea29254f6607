// Package store is the persistence of the Kadu API (docs/reference/rest.md): organisations,
// tasks, executions and their steps, idempotency records and monthly usage,
// on SQLite (the embedded default) or PostgreSQL 15 (replicas).
//
// It owns: the schema and its goose migrations (one directory per dialect,
// embedded), the SQL both back-ends share, the execution state machine
// (Transition applies AllowedTransitions atomically), Stripe-style
// idempotency records, soft delete and the purge of soft-deleted rows,
// prefixed UUIDv7 identifiers (NewID), the audit trail's hash chains (appended
// in the transaction of the change they record, verified, purged to a signed
// checkpoint: docs/audit.md), the encryption at rest of webhook
// secrets and idempotency records (SecretKeys), and telling storage that is
// full or unreachable from other failures (Classify, ErrUnavailable, Ready,
// ThrottleHandler).
//
// Every method that reads or writes an organisation's rows takes the
// organisation id first after the context and scopes every statement by it.
// A row of another organisation, or a soft-deleted row, is ErrNotFound: the
// store never tells a caller that someone else's id exists.
//
// It must not: know HTTP, MCP or the plan catalogue (plans are config; an Org
// only names its plan), render wire formats (Task and Execution are not wire
// types; core/api renders them), or let a driver type escape (callers see
// database/sql and this package's errors only).
//
// Wiring, once per process: Open (it migrates) → hand the *DB to core/api and
// core/jobs; the job queue takes Writer() and inserts its jobs through
// Tx.SQL() inside InTx, so an execution and its job commit together.
// RATIONALE.md records why the storage is shaped as it is.
package store
