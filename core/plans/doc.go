// Package plans is what an organisation may use and how its plan is found:
// the Plan type (the limits configured under plans.<name>), the built-in
// plans, and the Resolver that turns an organisation into the plan it is
// held to, with the one cache every caller on a replica shares.
//
// It owns: the fields of a plan and their meaning, the built-in developer
// and team plans, the rule for an organisation whose plan is not
// configured (renamed or removed after it was provisioned, or set by hand
// in the store) — the default plan, with every limit and the monthly cost
// cap of that plan, never no limits — and how long a replica trusts a plan
// it read (CacheTTL).
//
// It must not: read configuration (core/config decodes and validates plans
// and gives them here), open or import the store (the caller passes a
// Lookup, (*store.DB).PlanOf), or provision organisations (core/api does,
// then calls Remember). core/config imports it, so it stays a leaf.
//
// Callers: core/api (every request's limits), core/jobs (concurrency and
// cost caps of executions), core/app (per-organisation rate limits and the
// execution events). core/app builds one Resolver and gives it to all.
package plans
