package kadu

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// Log writes to the host's log: each record becomes one message of the
// form `msg key=value …` at the matching level (below Info is debug, below
// Warn info, below Error warn, the rest error). The host adds the bundle,
// its version, the organisation and the request id, caps a message at
// 4 KiB and rate-limits per instance.
//
// Log identifiers and decisions, never secrets, file contents or execution
// output.
var Log = slog.New(newHostHandler())

// Host log levels (sdk/ABI.md §6).
const (
	levelDebug int32 = 0
	levelInfo  int32 = 1
	levelWarn  int32 = 2
	levelError int32 = 3
)

func hostLevel(l slog.Level) int32 {
	switch {
	case l < slog.LevelInfo:
		return levelDebug
	case l < slog.LevelWarn:
		return levelInfo
	case l < slog.LevelError:
		return levelWarn
	}
	return levelError
}

// hostHandler sends a record with the log import as its message followed by
// its attributes, formatted by a slog.TextHandler (without time and level:
// the host records both).
type hostHandler struct {
	text slog.Handler
	out  *lineBuffer // shared by the handlers WithAttrs and WithGroup derive
}

// lineBuffer holds one formatted record. The mutex matters only natively:
// a wasm guest runs one goroutine at a time.
type lineBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lineBuffer) Write(p []byte) (int, error) { return b.buf.Write(p) }

func newHostHandler() *hostHandler {
	out := &lineBuffer{}
	text := slog.NewTextHandler(out, &slog.HandlerOptions{
		Level: slog.LevelDebug, // the host filters
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
				return slog.Attr{}
			}
			return a
		},
	})
	return &hostHandler{text: text, out: out}
}

func (h *hostHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *hostHandler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.buf.Reset()
	if err := h.text.Handle(ctx, r); err != nil {
		return err
	}
	attrs := bytes.TrimSpace(h.out.buf.Bytes())
	msg := make([]byte, 0, len(r.Message)+1+len(attrs))
	msg = append(msg, r.Message...)
	if len(attrs) > 0 {
		msg = append(append(msg, ' '), attrs...)
	}
	abi.Current().Log(hostLevel(r.Level), msg)
	return nil
}

func (h *hostHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &hostHandler{text: h.text.WithAttrs(as), out: h.out}
}

func (h *hostHandler) WithGroup(name string) slog.Handler {
	return &hostHandler{text: h.text.WithGroup(name), out: h.out}
}

// logf writes one message straight to h: the SDK's own reports, which
// must reach the host even if Log was replaced.
func logf(h abi.Host, level int32, format string, args ...any) {
	h.Log(level, []byte(fmt.Sprintf(format, args...)))
}
