package plugin

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
)

// Rate of guest log records per instance: a steady 10 per second with
// bursts of 50. Past it records are dropped and counted, so a chatty or
// hostile guest cannot flood the process log.
const (
	guestLogRate  = 10
	guestLogBurst = 50
	stderrTail    = 1 << 10 // kept per entry for fault reports
)

// guestLog writes one instance's log(), stdout and stderr to the host log,
// capped per message and rate-limited. It is used by one goroutine at a
// time, like its instance.
type guestLog struct {
	inst    *instance     // fixed at creation
	log     *slog.Logger  // fixed at creation; carries bundle and version
	lim     *rate.Limiter // fixed at creation
	now     func() time.Time
	dropped int
}

func newGuestLog(inst *instance, log *slog.Logger, now func() time.Time) *guestLog {
	return &guestLog{inst: inst, log: log, lim: rate.NewLimiter(guestLogRate, guestLogBurst), now: now}
}

// emit logs msg unless the instance is over its rate; a record after drops
// says how many were dropped.
func (g *guestLog) emit(ctx context.Context, level slog.Level, source, msg string) {
	if !g.lim.AllowN(g.now(), 1) {
		g.dropped++
		return
	}
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + "…"
	}
	attrs := []slog.Attr{slog.String("source", source), slog.String("org", g.inst.org)}
	if inv := g.inst.cur; inv != nil && inv.reqID != "" {
		attrs = append(attrs, slog.String("request_id", inv.reqID))
	}
	if g.dropped > 0 {
		attrs = append(attrs, slog.Int("dropped_before", g.dropped))
		g.dropped = 0
	}
	g.log.LogAttrs(ctx, level, "bundle: "+msg, attrs...)
}

// stdioWriter turns a guest's stdout or stderr into log records, one per
// line. WASI fd_write calls it on the goroutine running the instance.
type stdioWriter struct {
	g      *guestLog
	level  slog.Level
	source string
	buf    []byte
}

func (w *stdioWriter) Write(p []byte) (int, error) {
	n := len(p)
	if inv := w.g.inst.cur; inv != nil && w.source == "stderr" {
		tail := p[max(0, len(p)-stderrTail):]
		inv.stderr = append(inv.stderr, tail...)
		if over := len(inv.stderr) - stderrTail; over > 0 {
			inv.stderr = inv.stderr[over:]
		}
	}
	// Walk p line by line without buffering more than one record: a guest
	// writing megabytes without a newline costs records (rate-limited),
	// not host memory.
	for len(p) > 0 {
		chunk := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			chunk = p[:i]
		}
		chunk = chunk[:min(len(chunk), maxLogMessage-len(w.buf))]
		w.buf = append(w.buf, chunk...)
		p = p[len(chunk):]
		newline := len(p) > 0 && p[0] == '\n'
		if newline {
			p = p[1:]
		}
		if newline || len(w.buf) >= maxLogMessage {
			if len(w.buf) > 0 {
				w.g.emit(context.Background(), w.level, w.source, string(w.buf))
			}
			w.buf = w.buf[:0]
		}
	}
	return n, nil
}
