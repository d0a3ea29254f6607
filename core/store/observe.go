package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// Observer sees every statement the store runs, for metrics and traces.
// Start is called before the statement with its operation name and returns
// the context to run it under (a span's, say) and a function called with the
// statement's error once it has run. For QueryContext the statement has run
// when the rows are returned, not when they are read; for QueryRowContext the
// error is the one Row.Err reports.
//
// The operation is "<verb> <table>" ("select executions", "insert
// webhook_deliveries"), taken from the SQL the store owns, or "transaction"
// around the statements of one: a bounded set, never a value from a request. Implementations must be
// safe for concurrent use and cheap: they run on every query.
type Observer interface {
	Start(ctx context.Context, op string) (context.Context, func(err error))
}

// Observers combines several observers into one, called in order (nil ones
// are skipped). It returns nil when none is left.
func Observers(obs ...Observer) Observer {
	var list multiObserver
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type multiObserver []Observer

func (m multiObserver) Start(ctx context.Context, op string) (context.Context, func(error)) {
	dones := make([]func(error), len(m))
	for i, o := range m {
		ctx, dones[i] = o.Start(ctx, op)
	}
	return ctx, func(err error) {
		for i := len(dones) - 1; i >= 0; i-- {
			dones[i](err)
		}
	}
}

// observedQuerier runs every statement of q under obs.
type observedQuerier struct {
	q     querier
	obs   Observer
	names *sync.Map // query text → operation; shared by a DB's queriers
}

// observe wraps q with obs; a nil obs leaves q as it is (no cost).
func observe(q querier, obs Observer, names *sync.Map) querier {
	if obs == nil {
		return q
	}
	return observedQuerier{q: q, obs: obs, names: names}
}

func (o observedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, done := o.obs.Start(ctx, o.operation(query))
	res, err := o.q.ExecContext(ctx, query, args...)
	done(err)
	return res, err
}

func (o observedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, done := o.obs.Start(ctx, o.operation(query))
	rows, err := o.q.QueryContext(ctx, query, args...)
	done(err)
	return rows, err
}

func (o observedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx, done := o.obs.Start(ctx, o.operation(query))
	row := o.q.QueryRowContext(ctx, query, args...)
	done(row.Err())
	return row
}

// operation names a statement by its verb and first table, lowered:
// "select executions", "update webhook_deliveries", "with" when the
// statement starts with a CTE whose table is not obvious. Names are cached:
// the store's SQL is a bounded set of constant texts, so the cache is
// bounded too.
func (o observedQuerier) operation(query string) string {
	if op, ok := o.names.Load(query); ok {
		return op.(string)
	}
	op := parseOperation(query)
	o.names.Store(query, op)
	return op
}

func parseOperation(query string) string {
	f := strings.Fields(strings.ToLower(query))
	if len(f) == 0 {
		return "unknown"
	}
	verb := f[0]
	var after string
	switch verb {
	case "select", "delete":
		after = "from"
	case "insert":
		after = "into"
	case "update":
		if len(f) > 1 {
			return "update " + tableName(f[1])
		}
		return verb
	default:
		return verb
	}
	for i := 1; i < len(f)-1; i++ {
		if f[i] == after {
			return verb + " " + tableName(f[i+1])
		}
	}
	return verb
}

// tableName trims what may follow a table name without a space ("t(a,b)",
// "t,"), and a schema.
func tableName(s string) string {
	if i := strings.IndexAny(s, "(,;)"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "unknown"
	}
	return strings.Trim(s, `"`)
}
