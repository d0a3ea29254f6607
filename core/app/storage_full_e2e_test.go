package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
)

// TestStorageFullAnswers503 fills the real SQLite database of a running
// server — PRAGMA max_page_count pinned at the file's current size gives
// the genuine SQLITE_FULL a full disk gives — and checks what a client, an
// MCP client and the operator see: writes answer 503 unavailable with
// Retry-After and reason store_unavailable instead of 500, the tool call
// carries the same answer, /readyz says the store is degraded, the log does not get a
// line per failure; and once space is back, /readyz is ready again and
// writes succeed.
func TestStorageFullAnswers503(t *testing.T) {
	fx := newToolsFixture(t, config.DriverSQLite)
	srv := fx.srv
	admin := fx.as(t, TokenOptions{OrgID: "org_full", Role: "admin"})
	createTask := func(i int) (int, http.Header, map[string]any) {
		body, _ := json.Marshal(map[string]any{
			"name":         fmt.Sprintf("Conciliação %d", i),
			"instructions": strings.Repeat(fmt.Sprintf("Reconcile the statement, line %d. ", i), 200),
		})
		return admin.rest.do("POST", "/tasks", string(body))
	}
	status, _, created := createTask(0)
	if status != http.StatusCreated {
		t.Fatalf("before filling: POST /tasks = %d %v", status, created)
	}
	taskID, _ := created["id"].(string)
	if status, body := readyz(t, srv); status != http.StatusOK {
		t.Fatalf("before filling: /readyz = %d %q", status, body)
	}

	// No page may be added to the file from now on.
	w := srv.app.backend.db.Writer()
	ctx := context.Background()
	var pages int
	if err := w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}

	// Fill what is left of the last pages: some inserts still fit.
	var full map[string]any
	var fullHeader http.Header
	i := 1
	for ; i < 500; i++ {
		status, h, body := createTask(i)
		if status == http.StatusServiceUnavailable {
			full, fullHeader = body, h
			break
		}
		if status != http.StatusCreated {
			t.Fatalf("filling: POST /tasks = %d %v; want 201 until the file is full, then 503", status, body)
		}
	}
	if full == nil {
		t.Fatalf("the database never filled up after %d tasks", i)
	}
	first := full["errors"].([]any)[0].(map[string]any)
	if first["code"] != "unavailable" || first["reason"] != "store_unavailable" || fullHeader.Get("Retry-After") != "30" {
		t.Fatalf("full: errors[0] = %v, Retry-After %q; want code unavailable, reason store_unavailable, Retry-After 30",
			first, fullHeader.Get("Retry-After"))
	}

	// Through a tool the bundle gets the same 503 and reports it as a
	// failure worth retrying, not as the caller's mistake.
	a := admin.in(t).call("kadu_tasks_create", map[string]any{"name": "Via MCP", "instructions": strings.Repeat("x", 20000)})
	if !a.IsError || !strings.Contains(a.Text, "HTTP 503") || !strings.Contains(a.Text, "try again") {
		t.Fatalf("full: kadu_tasks_create = isError %v %q; want the bundle's report of a 503", a.IsError, a.Text)
	}

	// A destructive tool from a client without forms gets an approval link,
	// which is a write: once no approval fits, the MCP endpoint answers
	// 503 -31503 store_unavailable, not an opaque internal error.
	// Approvals are small, so the last free bytes take a few of them.
	var code int
	var res map[string]any
	for n := 0; ; n++ {
		code, res = mcpCallAs(t, srv, admin.token, `{}`, "tools/call", "kadu_tasks_delete",
			fmt.Sprintf(`{"name":"kadu_tasks_delete","arguments":{"id":%q}}`, taskID))
		if _, stored := res["result"]; code != http.StatusOK || !stored {
			break
		}
		if n == 2000 {
			t.Fatalf("full: 2000 approval links were still stored: %v", res)
		}
	}
	rpcErr, _ := res["error"].(map[string]any)
	data, _ := rpcErr["data"].(map[string]any)
	if code != http.StatusServiceUnavailable || rpcErr["code"] != float64(-31503) || data["reason"] != "store_unavailable" || data["retry_after_seconds"] != float64(30) {
		t.Fatalf("full: kadu_tasks_delete without forms = HTTP %d %v; want 503, -31503, reason store_unavailable, retry_after_seconds 30", code, res)
	}

	// Readiness tells the load balancer.
	status, body := readyz(t, srv)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"store":{"status":"fail","reason":"degraded: storage disk_full`) {
		t.Fatalf("full: /readyz = %d %q; want 503 with the store check failing: degraded: storage disk_full …", status, body)
	}

	// Many failures, few log lines.
	start := time.Now()
	const more = 40
	for j := range more {
		if status, _, body := createTask(1000 + j); status != http.StatusServiceUnavailable {
			t.Fatalf("still full: POST /tasks = %d %v; want 503", status, body)
		}
	}
	elapsed := time.Since(start)
	lines := strings.Count(srv.logs.String(), `"msg":"api: storage unavailable"`)
	// One line, plus one per throttle interval the loop spanned on a slow machine.
	if limit := 2 + int(elapsed/(10*time.Second)); lines > limit || lines == 0 {
		t.Fatalf("%d failed writes in %s logged %d 'api: storage unavailable' lines; want 1 to %d", more+1, elapsed, lines, limit)
	}

	// Space comes back.
	if _, err := w.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := readyz(t, srv)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("space freed 30 s ago, /readyz still %d %q", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status, _, body := createTask(2000); status != http.StatusCreated {
		t.Fatalf("after freeing space: POST /tasks = %d %v", status, body)
	}
	admin.in(t).ok("kadu_tasks_create", map[string]any{"name": "Via MCP again"})
}

// readyz returns the admin /readyz status and body.
func readyz(t *testing.T, srv *testServer) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + srv.cfg.AdminAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
