package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/canonjson"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// auditDB is a database for the audit commands' tests: the configuration
// file the commands read, and the store opened from it as the server would,
// to write events and tamper with their rows.
type auditDB struct {
	cfg string
	db  *store.DB
}

// auditDatabases runs fn against a fresh SQLite and a fresh PostgreSQL
// database.
func auditDatabases(t *testing.T, fn func(t *testing.T, d auditDB)) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			body := "data_dir: " + t.TempDir() + "\n" + noBundles
			if driver == "postgres" {
				body += "single_node: true\napi:\n  signing_key: audit-test-signing-key-of-at-least-32-characters\n" +
					"store:\n  driver: postgres\n  dsn: " + pgtest.Shared(t).NewDatabase(t) + "\n"
			}
			path := writeConfig(t, body)
			cfg, err := config.Load(path, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The server ran first: it made the schema and, on SQLite, its
			// signing key in the data directory, which the commands then read.
			if err := app.Migrate(context.Background(), cfg, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			db, err := app.OpenStore(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			fn(t, auditDB{cfg: path, db: db})
		})
	}
}

// seed appends n events to org's chain and returns them.
func (d auditDB) seed(t *testing.T, org string, n int) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	for i := range n {
		e, err := d.db.AppendAudit(context.Background(), store.AuditRecord{
			OrgID: org, Action: store.AuditRESTWrite, Surface: store.SurfaceREST, Issuer: "https://issuer.test",
			Subject: "user_1", Role: "admin", Scopes: []string{"kadu.admin"}, ClientID: "client_1", ClientName: "Claude",
			Route: "POST /api/v1/tasks", ResourceID: fmt.Sprintf("tsk_%d", i), Outcome: store.OutcomeSucceeded,
			Status: 201, Detail: "créé <ok> & \"quoted\"", RequestID: fmt.Sprintf("req_%d", i),
		})
		if err != nil {
			t.Fatalf("appending to %s: %v", org, err)
		}
		out = append(out, e)
	}
	return out
}

// exec runs SQL on the database directly, as someone with access to it
// would, behind the server's back.
func (d auditDB) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := d.db.Writer().ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// runKadu runs the kadu command in process, with the real dependencies.
func runKadu(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(deps{version: "test", run: app.Run, mint: app.MintDevToken, migrate: app.Migrate})
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestAuditVerifyCatchesTampering edits, deletes and reorders rows of
// three chains with SQL: verify names the first broken link of each (seq,
// event id, what is wrong) and fails, while the chains nobody touched
// still verify.
func TestAuditVerifyCatchesTampering(t *testing.T) {
	auditDatabases(t, func(t *testing.T, d auditDB) {
		intact := d.seed(t, "org_intact", 4)
		edited := d.seed(t, "org_edit", 5)
		d.seed(t, "org_delete", 5)
		reordered := d.seed(t, "org_reorder", 5)
		d.seed(t, store.InstallationChain, 2)

		out, err := runKadu(t, "audit", "verify", "--config", d.cfg)
		if err != nil {
			t.Fatalf("verify of untouched chains: %v\n%s", err, out)
		}
		head := fmt.Sprintf("org_intact: 4 events checked, OK (head: seq 4, hash %s)", intact[3].Hash)
		for _, want := range []string{head, "org_edit: 5 events checked, OK", "installation: 2 events checked, OK"} {
			if !strings.Contains(out, want) {
				t.Fatalf("verify output lacks %q:\n%s", want, out)
			}
		}

		d.exec(t,
			`UPDATE audit_events SET detail = 'nothing to see' WHERE org_id = 'org_edit' AND seq = 3`,
			`DELETE FROM audit_events WHERE org_id = 'org_delete' AND seq = 2`,
			// Swap events 2 and 3 (through -1: seq is unique in a chain).
			`UPDATE audit_events SET seq = -1 WHERE org_id = 'org_reorder' AND seq = 2`,
			`UPDATE audit_events SET seq = 2 WHERE org_id = 'org_reorder' AND seq = 3`,
			`UPDATE audit_events SET seq = 3 WHERE org_id = 'org_reorder' AND seq = -1`,
		)
		tests := []struct {
			org  string
			want string
		}{
			{"org_edit", fmt.Sprintf("org_edit: BROKEN at seq 3 (%s): %s", edited[2].ID, store.AuditReasonHash)},
			{"org_delete", "org_delete: BROKEN at seq 2 (no row): " + store.AuditReasonMissing},
			{"org_reorder", fmt.Sprintf("org_reorder: BROKEN at seq 2 (%s): %s", reordered[2].ID, store.AuditReasonPrevHash)},
		}
		for _, tt := range tests {
			out, err := runKadu(t, "audit", "verify", "--org", tt.org, "--config", d.cfg)
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("verify --org %s = %v\n%s\nwant an error and the line %q", tt.org, err, out, tt.want)
			}
		}
		out, err = runKadu(t, "audit", "verify", "--config", d.cfg)
		if err == nil || !strings.Contains(err.Error(), "org_edit") || !strings.Contains(out, "org_intact: 4 events checked, OK") ||
			strings.Count(out, "BROKEN") != 3 {
			t.Fatalf("verify of every chain = %v\n%s\nwant three broken chains named and org_intact OK", err, out)
		}
		if out, err := runKadu(t, "audit", "verify", "--installation", "--config", d.cfg); err != nil ||
			!strings.Contains(out, "installation: 2 events checked, OK") {
			t.Fatalf("verify --installation = %v\n%s", err, out)
		}
	})
}

// TestAuditExport exports a chain as JSON Lines: one event per line, in
// chain order, every field as stored, and each line's hash recomputes
// from the line alone (docs/audit.md#the-hash).
func TestAuditExport(t *testing.T) {
	auditDatabases(t, func(t *testing.T, d auditDB) {
		want := d.seed(t, "org_a", 3)
		d.seed(t, "org_b", 2)
		inst := d.seed(t, store.InstallationChain, 1)

		out, err := runKadu(t, "audit", "export", "--org", "org_a", "--config", d.cfg)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("export of org_a has %d lines, want %d:\n%s", len(lines), len(want), out)
		}
		for i, line := range lines {
			var got exportedEvent
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
			}
			if w := exported(want[i]); !equalJSON(t, got, w) {
				t.Fatalf("line %d = %+v\nwant %+v", i+1, got, w)
			}
			if h := lineHash(t, line); h != got.Hash {
				t.Fatalf("line %d: hash recomputed from the line is %s, the line says %s", i+1, h, got.Hash)
			}
			if i > 0 && got.PrevHash != want[i-1].Hash {
				t.Fatalf("line %d: prev_hash %s is not the previous line's hash", i+1, got.PrevHash)
			}
		}
		for _, f := range []string{`"seq":1`, `"prev_hash":""`, `"scopes":["kadu.admin"]`, `"org_id":"org_a"`, `créé <ok>`} {
			if !strings.Contains(lines[0], f) {
				t.Fatalf("the first line lacks %s: %s", f, lines[0])
			}
		}

		out, err = runKadu(t, "audit", "export", "--installation", "--config", d.cfg)
		if err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, inst[0].ID) {
			t.Fatalf("export --installation = %v\n%s", err, out)
		}
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if out, err := runKadu(t, "audit", "export", "--org", "org_a", "--since", future, "--config", d.cfg); err != nil || out != "" {
			t.Fatalf("export --since an hour ahead = %v, %q; want nothing", err, out)
		}
		if out, err := runKadu(t, "audit", "export", "--org", "org_a", "--since", "1h", "--config", d.cfg); err != nil ||
			strings.Count(out, "\n") != 3 {
			t.Fatalf("export --since 1h = %v\n%s; want the 3 events", err, out)
		}
	})
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return bytes.Equal(x, y)
}

// lineHash recomputes an exported line's hash the way an auditor would:
// sha256 of prev_hash followed by the RFC 8785 form of the line without
// its two hashes.
func lineHash(t *testing.T, line string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	prev, _ := m["prev_hash"].(string)
	delete(m, "prev_hash")
	delete(m, "hash")
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := canonjson.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.WriteString(h, prev)
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// TestAuditFlagErrors: a wrong use of the flags is refused before the
// database is opened, naming the flag.
func TestAuditFlagErrors(t *testing.T) {
	t.Parallel()
	cfg := emptyConfig(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"audit", "export"}, "--org or --installation: required"},
		{[]string{"audit", "export", "--org", "org_a", "--installation"}, "--org and --installation"},
		{[]string{"audit", "verify", "--org", "org_a", "--installation"}, "--org and --installation"},
		{[]string{"audit", "verify", "--org", ""}, "--org: empty"},
		{[]string{"audit", "export", "--org", "org_a", "--since", "30d"}, `--since "30d"`},
		{[]string{"audit", "verify", "extra"}, "unknown command"},
		// No server ever ran with this data directory: no key to check the
		// checkpoints with, and none is made up.
		{[]string{"audit", "verify"}, "no API signing key: set api.signing_key"},
	}
	for _, tt := range tests {
		_, err := runKadu(t, append(tt.args, "--config", cfg)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("kadu %s = %v, want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// BenchmarkAuditCommands measures kadu audit verify and export of one
// 10,000-event chain on SQLite, in process (opening the store included):
// go test ./core/cmd/kadu -run '^$' -bench BenchmarkAuditCommands
func BenchmarkAuditCommands(b *testing.B) {
	const events = 10_000
	path := filepath.Join(b.TempDir(), "kadu.yaml")
	if err := os.WriteFile(path, []byte("data_dir: "+b.TempDir()+"\n"+noBundles), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(path, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Migrate(context.Background(), cfg, slog.New(slog.DiscardHandler)); err != nil {
		b.Fatal(err)
	}
	db, err := app.OpenStore(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for i := range events {
		if _, err := db.AppendAudit(context.Background(), store.AuditRecord{OrgID: "org_bench", Action: store.AuditRESTWrite,
			Surface: store.SurfaceREST, Subject: "user_1", Route: "POST /api/v1/tasks", ResourceID: fmt.Sprint("tsk_", i),
			Outcome: store.OutcomeSucceeded, Status: 201}); err != nil {
			b.Fatal(err)
		}
	}
	for _, cmd := range [][]string{{"audit", "verify", "--org", "org_bench"}, {"audit", "export", "--org", "org_bench"}} {
		b.Run(cmd[1], func(b *testing.B) {
			for b.Loop() {
				root := newRootCmd(deps{version: "test"})
				root.SetOut(io.Discard)
				root.SetErr(io.Discard)
				root.SetArgs(append(cmd, "--config", path))
				if err := root.ExecuteContext(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/events, "µs/event")
		})
	}
}
