package plugin

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestStdioWriterSplitsLinesAndCapsRecords(t *testing.T) {
	logs := &logBuffer{}
	inst := &instance{org: "org_a", cur: &invocation{reqID: "req_1"}}
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	inst.logs = newGuestLog(inst, slog.New(slog.NewTextHandler(logs, nil)), func() time.Time { return now })
	w := &stdioWriter{g: inst.logs, level: slog.LevelWarn, source: "stderr"}

	w.Write([]byte("first line\nsecond "))
	w.Write([]byte("half\n\n"))
	w.Write([]byte(strings.Repeat("y", 2*maxLogMessage+10) + "\n"))
	got := logs.String()
	for _, want := range []string{`msg="bundle: first line"`, `msg="bundle: second half"`, "request_id=req_1", "org=org_a", "source=stderr"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 5 {
		t.Errorf("%d records, want 5: two lines, no empty one, and a long line cut into 3 records of at most 4 KiB", n)
	}
	if tail := string(inst.cur.stderr); len(tail) != stderrTail || !strings.HasSuffix(tail, "y\n") {
		t.Errorf("stderr tail is %d bytes, want the last %d", len(tail), stderrTail)
	}
}
