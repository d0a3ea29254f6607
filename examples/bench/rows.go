package main

import "fmt"

// Targets of the issue (two cores, load generator on the same machine),
// shown beside the rows that have no peer.
const (
	targetEcho     = "target ≥ 1.50× mcp-go, p99 ≤ 10 ms"
	targetSQLite   = "target ≥ 5,000 req/s, p99 ≤ 10 ms"
	targetPostgres = "target ≥ 3,000 req/s, p99 ≤ 10 ms"
	targetMemory   = "target ≤ 4 MiB"
	targetWarm     = "target ≤ 500 ms"
)

// rows is the table, in the order the issue lists what to measure.
func (b *bench) rows() []row {
	var rows []row
	if runs := b.echo[serverKadu]; len(runs) > 0 {
		r := loadRow(fmt.Sprintf("`echo` tools/call, Kadu, bundle built with sdk/go (`pool_size` %d, warmed)", echoPoolSize), runs)
		r.VsPeer = ratio(runs, b.echo[serverMCPGo], "mcp-go") + "; " + ratio(runs, b.echo[serverGoSDK], "go-sdk") +
			" (" + targetEcho + ")"
		rows = append(rows, r)
		r = loadRow("`echo` tools/call, mcp-go v1.2.1, native Go tool (stateless streamable HTTP)", b.echo[serverMCPGo])
		r.VsPeer = "the peer"
		rows = append(rows, r)
		r = loadRow("`echo` tools/call, official go-sdk v1.8.0, native Go tool (stateless, JSON responses)", b.echo[serverGoSDK])
		r.VsPeer = ratio(b.echo[serverGoSDK], b.echo[serverMCPGo], "mcp-go")
		rows = append(rows, r)
	}
	if runs := b.execGet["sqlite"]; len(runs) > 0 {
		r := loadRow("`kadu_executions_get` end to end, SQLite, default configuration", runs)
		r.VsPeer = targetSQLite
		rows = append(rows, r)
	}
	if runs := b.execGet["postgres"]; len(runs) > 0 {
		r := loadRow("`kadu_executions_get` end to end, PostgreSQL 15, default configuration", runs)
		r.VsPeer = targetPostgres
		rows = append(rows, r)
	}
	for _, key := range []string{"echo", "executions/sqlite", "executions/postgres"} {
		if m, ok := b.memory[key]; ok {
			rows = append(rows, memoryRow(key, m))
		}
	}
	if b.coldStart > 0 {
		rows = append(rows, row{What: "`kadu serve` → `/readyz` 200, cold: empty data directory and compilation cache, the four first-party bundles",
			Result: "**" + fmtDur(float64(b.coldStart)) + "**"})
	}
	if len(b.warmStarts) > 0 {
		var vs []float64
		for _, d := range b.warmStarts {
			vs = append(vs, float64(d))
		}
		rows = append(rows, row{What: "the same, warm: restarted on that data directory (bundles from the compilation cache)",
			Result: "**" + span(vs, fmtDur) + "**" + runsNote(len(vs)), VsPeer: targetWarm})
	}
	return append(rows, b.micro...)
}

// memoryRow shows the linear memory per instance of a bundle after its
// load, from GET /admin/plugins.
func memoryRow(key string, m bundleMemory) row {
	what := map[string]string{
		"echo":                "Linear memory per pooled instance, `echo` (Go guest), after the load",
		"executions/sqlite":   "Linear memory per pooled instance, `executions` (Go guest), after the SQLite load",
		"executions/postgres": "Linear memory per pooled instance, `executions` (Go guest), after the PostgreSQL load",
	}[key]
	res := fmt.Sprintf("**%s**; %d instances (%d idle), %s charged to the budget each with the host's overhead; "+
		"%d evictions, %d busy refusals during the load (whole server)", fmtBytes(m.PerInstanceLM), m.Instances, m.Idle,
		fmtBytes(float64(m.MemoryBytes)/float64(max(m.Instances, 1))), m.Evictions, m.BusyRefusals)
	return row{What: what, Result: res, VsPeer: targetMemory}
}

func runsNote(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf(" (%d starts)", n)
}
