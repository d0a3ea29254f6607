package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultIPPerMinute = 60
	DefaultBurstWindow = 10 * time.Second
	DefaultMaxKeys     = 1 << 18 // about 20 MiB when full (measured: 19.3 MiB of IPv6 keys)
)

const (
	// checkTimeout bounds one database check. A check is on every
	// request's path: a database slower than this costs the request
	// nothing more, the replica decides alone (see Limiter).
	checkTimeout = 500 * time.Millisecond

	// sweepInterval is how often the background loop drops idle keys from
	// memory and, with a database, from table rate_limits.
	sweepInterval = time.Minute
	purgeTimeout  = 10 * time.Second

	// warnInterval spaces the warnings of a failing database or plan
	// lookup: one per interval, with the count of those left out.
	warnInterval = 10 * time.Second
)

// Options configure New. Every field is optional.
type Options struct {
	// PerMinute returns the organisation's requests-per-minute limit (from
	// its plan). It is called on every AllowOrg, so it must be cheap (a
	// cached lookup). 0 (or less) means no limit. An error allows the
	// request and is logged. Nil: organisations are not limited.
	PerMinute func(ctx context.Context, orgID string) (int, error)

	// IPPerMinute is the limit for unauthenticated and failed-auth traffic
	// per client address (IPv6: per /64). Default 60.
	IPPerMinute int

	// BurstWindow sets the burst: a key that has been idle may send
	// BurstWindow's worth of its limit at once, at least one request:
	// burst = max(1, ⌊limit × BurstWindow / 1 min⌋). Over any window of
	// length w a key gets at most burst + limit × w / 1 min requests.
	// Default 10 s (a 60/min limit: 10 at once, then one a second); at most
	// one minute.
	BurstWindow time.Duration

	// DB, when set, is a PostgreSQL pool (pgx stdlib) holding table
	// rate_limits (migration 00004): the limits then hold across every
	// replica using the same database. Nil: limits are per process, in
	// memory. The Limiter does not close it.
	DB *sql.DB

	// MaxKeys bounds how many keys the memory limiter holds (spread over
	// 64 shards, MaxKeys/64 each). Past it, adding a key drops one close to
	// expiring. Default 262,144.
	MaxKeys int

	// Now is the clock. Default time.Now for memory; with a DB, nil means
	// the database server's clock, so replicas whose clocks disagree still
	// share one timeline, and a set Now is passed to every statement
	// (tests use it to be deterministic).
	Now func() time.Time

	// Logger receives warnings (database or plan lookup failing), never a
	// client address. Default: discard.
	Logger *slog.Logger

	// OnLocalDecision is called each time the database check failed or
	// timed out and this replica decided alone (a limit then holds per
	// replica, not across them), with the key's kind ("ip", "org"). For
	// counting; it must be cheap. Nil: none.
	OnLocalDecision func(keyKind string)
}

// Limiter enforces the rate limits of docs/reference/limits.md#rate-limits with GCRA. It implements
// core/mcp's Limiter interface, and the REST API uses the same methods, so
// MCP and REST share each organisation's budget.
//
// A Limiter is safe for concurrent use. New starts a background goroutine
// that drops idle keys; Close stops it. The Limiter keeps answering after
// Close (requests still in flight during shutdown are decided), it only no
// longer sweeps. The zero value is not usable: use New.
type Limiter struct {
	// fixed at creation
	perMinute   func(ctx context.Context, orgID string) (int, error)
	ipRule      rule
	burstWindow time.Duration
	db          *sql.DB // nil: memory only
	now         func() time.Time
	dbClock     bool // Options.Now was nil: statements read the database's clock
	log         *slog.Logger
	onLocal     func(keyKind string) // Options.OnLocalDecision; nil: none

	// mem is the whole limiter without a DB. With one, it is this
	// replica's first filter and its fallback (see allow).
	mem  *memory
	warn warnGate
	// batches merges concurrent database checks of one key (coalesce.go).
	batches *coalescer

	stop      chan struct{}
	done      chan struct{} // closed when the sweep loop has returned
	closeOnce sync.Once
}

// New returns a Limiter. It fails on Options out of range, naming the field.
func New(opts Options) (*Limiter, error) {
	var errs []error
	if opts.IPPerMinute < 0 {
		errs = append(errs, fmt.Errorf("ratelimit: Options.IPPerMinute is %d: set requests per minute (> 0), or 0 for the default %d",
			opts.IPPerMinute, DefaultIPPerMinute))
	}
	if opts.BurstWindow < 0 || opts.BurstWindow > time.Minute {
		errs = append(errs, fmt.Errorf("ratelimit: Options.BurstWindow is %s: set a duration in (0, 1m], or 0 for the default %s",
			opts.BurstWindow, DefaultBurstWindow))
	}
	if opts.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("ratelimit: Options.MaxKeys is %d: set a positive number of keys, or 0 for the default %d",
			opts.MaxKeys, DefaultMaxKeys))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.IPPerMinute == 0 {
		opts.IPPerMinute = DefaultIPPerMinute
	}
	if opts.BurstWindow == 0 {
		opts.BurstWindow = DefaultBurstWindow
	}
	if opts.MaxKeys == 0 {
		opts.MaxKeys = DefaultMaxKeys
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{
		perMinute:   opts.PerMinute,
		ipRule:      newRule(opts.IPPerMinute, opts.BurstWindow),
		burstWindow: opts.BurstWindow,
		db:          opts.DB,
		now:         opts.Now,
		dbClock:     opts.Now == nil,
		log:         opts.Logger,
		onLocal:     opts.OnLocalDecision,
		mem:         newMemory(opts.MaxKeys),
		batches:     newCoalescer(),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	go l.sweepLoop()
	return l, nil
}

// AllowIP charges one unauthenticated or failed-auth request to the client
// address ip (as net.SplitHostPort leaves it). When the request is refused,
// retryAfter is the whole seconds (≥ 1 s) until one would be allowed.
func (l *Limiter) AllowIP(ctx context.Context, ip string) (ok bool, retryAfter time.Duration) {
	return l.allow(ctx, ipKey(ip), l.ipRule)
}

// AllowOrg charges one request to the organisation, against the limit
// Options.PerMinute returns now: a plan change applies to the next request.
// When the request is refused, retryAfter is the whole seconds (≥ 1 s)
// until one would be allowed.
func (l *Limiter) AllowOrg(ctx context.Context, orgID string) (ok bool, retryAfter time.Duration) {
	if l.perMinute == nil {
		return true, 0
	}
	n, err := l.perMinute(ctx, orgID)
	if err != nil {
		if ctx.Err() == nil {
			l.warnf(ctx, "ratelimit: plan limit lookup failed; request allowed", slog.String("org_id", orgID), slog.Any("error", err))
		}
		return true, 0
	}
	if n <= 0 {
		return true, 0
	}
	return l.allow(ctx, orgKey(orgID), newRule(n, l.burstWindow))
}

// allow decides one request for key.
//
// Without a database, memory decides. With one, memory decides first, as
// this replica's own limiter: a key this replica alone has seen exceed the
// limit is refused without a database round trip (the shared count, which
// includes this replica's requests, cannot be lower by more than one
// request), so a flood from one address costs the database at most the
// limit per replica. What memory allows, the database decides, in one
// statement with the other requests of the same key that arrive while one is
// in flight (coalescer: exactly as strict as a statement each).
//
// When the database fails or is slower than checkTimeout, the request is
// allowed as memory decided (fail open to the per-replica limit), and a
// warning is logged at most every warnInterval. A store outage must not turn
// into 429s for every client — the requests that need the store get 503
// store_unavailable on their own — while a flood is still held to the
// limit on each replica.
func (l *Limiter) allow(ctx context.Context, key string, r rule) (bool, time.Duration) {
	now := l.now().UnixMicro()
	ok, wait := l.mem.check(key, r, now)
	if !ok {
		return false, retryAfter(wait)
	}
	if l.db == nil {
		return true, 0
	}
	ok, wait, err := l.batches.check(ctx, key, r, func(ctx context.Context, r rule) (bool, int64, error) {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		defer cancel()
		return checkDB(cctx, l.db, key, r, l.sqlNow(now))
	})
	if err != nil {
		if ctx.Err() == nil { // the caller gave up: nothing is wrong with the database
			l.warnf(ctx, "ratelimit: database check failed; this replica decides alone", slog.String("key_kind", keyKind(key)), slog.Any("error", err))
			if l.onLocal != nil {
				l.onLocal(keyKind(key))
			}
		}
		return true, 0
	}
	if !ok {
		return false, retryAfter(wait)
	}
	return true, 0
}

// sqlNow is the $now argument of a statement: nil (the database's clock)
// unless Options.Now was set.
func (l *Limiter) sqlNow(now int64) any {
	if l.dbClock {
		return nil
	}
	return now
}

// Purge drops the state of idle keys (TAT not in the future, which means
// the same as no state): from this process's memory and, with a DB, from
// table rate_limits for every replica. It returns how many keys it dropped
// in all. The Limiter already does this every minute in the background;
// Purge is for a maintenance job or a test.
func (l *Limiter) Purge(ctx context.Context) (int64, error) {
	now := l.now().UnixMicro()
	n := int64(l.mem.sweep(now))
	if l.db == nil {
		return n, nil
	}
	m, err := purgeDB(ctx, l.db, l.sqlNow(now))
	return n + m, err
}

// Close stops the background sweep and waits for it to return. It does not
// close Options.DB. It is safe to call more than once; it returns nil.
func (l *Limiter) Close() error {
	l.closeOnce.Do(func() { close(l.stop) })
	<-l.done
	return nil
}

func (l *Limiter) sweepLoop() {
	defer close(l.done)
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout)
			if _, err := l.Purge(ctx); err != nil {
				l.warnf(ctx, "ratelimit: purging idle keys failed", slog.Any("error", err))
			}
			cancel()
		}
	}
}

// warnf logs a warning unless one was logged less than warnInterval ago; the
// next one that gets through says how many were left out.
func (l *Limiter) warnf(ctx context.Context, msg string, attrs ...slog.Attr) {
	suppressed, ok := l.warn.pass(l.now())
	if !ok {
		return
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	l.log.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}

// warnGate lets one warning through per warnInterval and counts the rest.
type warnGate struct {
	mu         sync.Mutex // guards next and suppressed
	next       time.Time
	suppressed int
}

func (g *warnGate) pass(now time.Time) (suppressed int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Before(g.next) {
		g.suppressed++
		return 0, false
	}
	suppressed, g.suppressed = g.suppressed, 0
	g.next = now.Add(warnInterval)
	return suppressed, true
}
