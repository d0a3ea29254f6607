// Package jobs runs Kadu's background work on River: executions (the agent
// runner), the expiry of executions left waiting for input, and the purge
// of soft-deleted rows and old idempotency records.
//
// It owns: the River client on the store's own database (riversqlite on the
// embedded SQLite, riverdatabasesql on PostgreSQL, so jobs are inserted in the
// same transaction as the rows they work on), the workers, and the Sink that
// turns what a runner reports into steps, costs and output files.
//
// It must not: serve HTTP, know MCP, or decide who may do what (the API has
// already authorised every execution it enqueues).
package jobs
