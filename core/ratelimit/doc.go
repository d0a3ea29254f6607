// Package ratelimit enforces Kadu's request rate limits (docs/reference/limits.md#rate-limits): per
// organisation, from its plan, on MCP and REST together; and per client
// address for unauthenticated traffic and failed authentications.
//
// It owns: the GCRA decision (one theoretical arrival time per key, the
// limit passed in on every check so a plan change applies at once), the
// keys ("org:<id>", "ip:<addr>", IPv6 by /64), the bounded in-memory
// limiter of a single node, the shared limiter on PostgreSQL table
// rate_limits (one INSERT … ON CONFLICT DO UPDATE … RETURNING per check,
// so the limit holds across replicas; the checks of one key that arrive
// while one is in flight share the next statement, exactly as strict), the purge of idle keys, and the
// Retry-After value (whole seconds until one request would be allowed, at
// least one).
//
// Failure policy: a database that errors or takes longer than 500 ms fails
// open, to the limit each replica keeps in memory: the request is decided
// by this replica alone (so a flood is still held to the limit per replica,
// N× across N replicas) and a warning is logged, at most one per 10 s. A
// store outage must not become 429s for every client; the requests that
// need the store already answer 503 store_unavailable. A plan lookup that
// errors allows the request, likewise logged.
//
// It must not: decide where in the request a limit applies or write the
// 429 (core/mcp and core/api do, with their own wire formats), know plans
// (Options.PerMinute is the lookup), log a client address, or open or
// migrate the database (core/store's migration 00004 creates the table).
//
// Wiring, once per process:
//
//	l, err := ratelimit.New(ratelimit.Options{
//		PerMinute: plans.RequestsPerMinute, // cached
//		DB:        db.Writer(),             // PostgreSQL only; nil on SQLite
//		Logger:    log,
//	})
//	defer l.Close()
//	mcp.New(mcp.Options{Limiter: l, …}) // and the REST middleware
//
// RATIONALE.md records why GCRA, why in the database, and why /64.
package ratelimit
