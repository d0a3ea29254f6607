//go:build replicas

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/confirm"
)

// workload is the mixed traffic of TestReplicasBehindNginx, all through
// nginx. Workers record what went wrong in rec and carry on.
type workload struct {
	t      *testing.T
	lb     *lbClient
	rec    *recorder
	token  string
	taskID string
	s3     *http.Client

	seq            atomic.Int64 // idempotency keys and names
	swappedAt      atomic.Int64 // unix nanoseconds when every replica had reloaded
	staleAfterSwap atomic.Int64
	toolCalls      atomic.Int64
	lists          atomic.Int64
	confirmed      atomic.Int64 // destructive calls confirmed in the chat
	interrupted    atomic.Int64 // confirmed calls whose replica was SIGKILLed mid-run
	approved       atomic.Int64 // destructive calls approved on the approval page
	killedAt       atomic.Int64 // unix nanoseconds of the SIGKILL
	uploads        atomic.Int64

	mu   sync.Mutex
	runs []run // executions launched on uploaded files
	swap map[string]int
}

// run is one execution launched on one uploaded file.
type run struct {
	execID, fileID string
	content        []byte
}

func (w *workload) key(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, w.seq.Add(1))
}

// reader lists the tools and calls read-only ones: kadu_usage_get and the
// swap bundle's swap_version, whose answer says which version served it.
func (w *workload) reader(ctx context.Context) {
	for ctx.Err() == nil {
		a, res, err := w.lb.mcp(w.token, "{}", "tools/list", "", "{}", true)
		if err != nil {
			w.rec.fail("tools/list: %v", err)
			continue
		}
		tools, _ := res["result"].(map[string]any)["tools"].([]any)
		if a.status != http.StatusOK || len(tools) != 33 {
			w.rec.fail("tools/list: HTTP %d, %d tools (want the 32 first-party and swap_version): %s", a.status, len(tools), clip(a.body))
		}
		w.lists.Add(1)

		a, res, err = w.lb.mcp(w.token, "{}", "tools/call", "kadu_usage_get", `{"name":"kadu_usage_get","arguments":{}}`, true)
		if err == nil {
			_, err = toolResult(a, res)
		}
		if err != nil {
			w.rec.fail("kadu_usage_get: %v", err)
		}
		w.toolCalls.Add(1)

		begun := time.Now().UnixNano()
		v, err := swapVersion(w.lb, w.token)
		w.toolCalls.Add(1)
		if err != nil {
			w.rec.fail("swap_version: %v", err)
			continue
		}
		w.mu.Lock()
		if w.swap == nil {
			w.swap = map[string]int{}
		}
		w.swap[v]++
		w.mu.Unlock()
		if at := w.swappedAt.Load(); at != 0 && begun > at && v != "2.0.0" {
			w.staleAfterSwap.Add(1)
		}
	}
}

// swapVersion calls swap_version through c.
func swapVersion(c *lbClient, token string) (string, error) {
	a, res, err := c.mcp(token, "{}", "tools/call", "swap_version", `{"name":"swap_version","arguments":{}}`, true)
	if err != nil {
		return "", err
	}
	result, err := toolResult(a, res)
	if err != nil {
		return "", err
	}
	sc, _ := result["structuredContent"].(map[string]any)
	v, _ := sc["version"].(string)
	return v, nil
}

// destructive creates a task with a tool, then deletes it with
// kadu_tasks_delete, which asks to confirm in the chat (the client
// declares elicitation); the person accepts, and the confirmation may
// reach another replica than the question.
func (w *workload) destructive(ctx context.Context) {
	const caps = `{"elicitation":{}}`
	for ctx.Err() == nil {
		args, _ := json.Marshal(map[string]any{"name": w.key("Temporary task"), "instructions": "Nothing.", "idempotency_key": w.key("create")})
		a, res, err := w.lb.mcp(w.token, caps, "tools/call", "kadu_tasks_create", `{"name":"kadu_tasks_create","arguments":`+string(args)+`}`, true)
		w.toolCalls.Add(1)
		var result map[string]any
		if err == nil {
			result, err = toolResult(a, res)
		}
		if err != nil {
			w.rec.fail("kadu_tasks_create: %v", err)
			continue
		}
		sc, _ := result["structuredContent"].(map[string]any)
		id, _ := sc["id"].(string)
		del, _ := json.Marshal(map[string]any{"id": id, "idempotency_key": w.key("delete")})
		params := `{"name":"kadu_tasks_delete","arguments":` + string(del) + `}`
		a, res, err = w.lb.mcp(w.token, caps, "tools/call", "kadu_tasks_delete", params, true)
		w.toolCalls.Add(1)
		if err != nil {
			w.rec.fail("kadu_tasks_delete: %v", err)
			continue
		}
		result, _ = res["result"].(map[string]any)
		if result == nil || result["resultType"] != "input_required" {
			w.rec.fail("kadu_tasks_delete did not ask to confirm: HTTP %d %s", a.status, clip(a.body))
			continue
		}
		state, _ := result["requestState"].(string)
		params = fmt.Sprintf(`{"name":"kadu_tasks_delete","arguments":%s,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":%q}`, del, state)
		a, res, err = w.confirm(params)
		if err == nil && interrupted(res) {
			// The protocol's definitive answer when the replica running
			// the call was killed before recording its outcome.
			w.interrupted.Add(1)
			continue
		}
		if err == nil {
			result, err = toolResult(a, res)
		}
		if err != nil {
			w.rec.fail("kadu_tasks_delete confirmed: %v", err)
			continue
		}
		if result["resultType"] != "complete" {
			w.rec.fail("kadu_tasks_delete confirmed: %s", clip(a.body))
			continue
		}
		w.confirmed.Add(1)
	}
}

// confirmBudget bounds how long a confirmed call may answer "still
// running": the run limit after which the server records the call of a
// replica killed mid-run as interrupted (at most confirm.DefaultRunLimit
// with this test's configuration: core/app/confirmlimit.go), plus slack
// for the retries' own round trips on a busy machine.
const confirmBudget = confirm.DefaultRunLimit + 30*time.Second

// confirm sends the confirmed call params, and again every 1.5 s while
// the server answers that it is still running (its replica may have been
// killed mid-run), until a definitive answer or confirmBudget. A
// requestState is single-use: a resend never runs the call twice.
func (w *workload) confirm(params string) (answer, map[string]any, error) {
	began := time.Now()
	for {
		a, res, err := w.lb.mcp(w.token, `{"elicitation":{}}`, "tools/call", "kadu_tasks_delete", params, true)
		w.toolCalls.Add(1)
		if err != nil || !bytes.Contains(a.body, []byte("This confirmed call is still running")) {
			return a, res, err
		}
		if time.Since(began) > confirmBudget {
			return a, res, fmt.Errorf("still running %s after it was confirmed: the server never recorded an outcome "+
				"(want the interrupted answer after the run limit): %s", confirmBudget, clip(a.body))
		}
		time.Sleep(1500 * time.Millisecond)
	}
}

// interrupted reports whether res is the definitive answer to a confirmed
// call whose server stopped before recording its outcome.
func interrupted(res map[string]any) bool {
	result, _ := res["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	return result["isError"] == true && sc["status"] == "outcome_unknown" && sc["reason"] == "server_stopped"
}

// files registers a file, uploads it to the bucket's presigned URL,
// confirms it and launches the playbook task on it.
func (w *workload) files(ctx context.Context) {
	for ctx.Err() == nil {
		content := []byte(statement + fmt.Sprintf("04/03/2026;PIX RECEBIDO CLIENTE %d;;%d,00;16.300,00\n", w.seq.Add(1), w.seq.Load()))
		body, _ := json.Marshal(map[string]any{"filename": "extrato.csv", "content_type": "text/csv", "size_bytes": len(content), "sha256": sha(content), "idempotency_key": w.key("file")})
		a, err := w.lb.rest(w.token, "POST", "/files", string(body), true)
		if err != nil || a.status != http.StatusCreated {
			w.rec.fail("POST /files: %v %d %s", err, a.status, clip(a.body))
			continue
		}
		f := a.json()
		fileID := f["file"].(map[string]any)["id"].(string)
		up := f["upload"].(map[string]any)
		req, _ := http.NewRequest(http.MethodPut, up["url"].(string), bytes.NewReader(content))
		for k, v := range up["headers"].(map[string]any) {
			req.Header.Set(k, fmt.Sprint(v))
		}
		res, err := w.s3.Do(req)
		if err != nil {
			w.rec.fail("PUT to the bucket: %v", err)
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			w.rec.fail("PUT to the bucket: %d", res.StatusCode)
			continue
		}
		a, err = w.lb.rest(w.token, "POST", "/files/"+fileID+"/confirm", "", true)
		if err != nil || a.status != http.StatusOK {
			w.rec.fail("confirm %s: %v %d %s", fileID, err, a.status, clip(a.body))
			continue
		}
		w.uploads.Add(1)
		body, _ = json.Marshal(map[string]any{"input_file_ids": []string{fileID}, "idempotency_key": w.key("run")})
		a, err = w.lb.rest(w.token, "POST", "/tasks/"+w.taskID+"/run", string(body), true)
		if err != nil || a.status != http.StatusAccepted {
			w.rec.fail("run on %s: %v %d %s", fileID, err, a.status, clip(a.body))
			continue
		}
		w.mu.Lock()
		w.runs = append(w.runs, run{execID: a.json()["id"].(string), fileID: fileID, content: content})
		w.mu.Unlock()
	}
}

// execFigures are what checkExecutions found.
type execFigures struct {
	launched, succeeded, failed int
	failures                    map[string]int // failure code → count
	requeued                    int            // enqueued again by a sweeper: their job died fetched (core/jobs/stranded.go)
	downloads                   int
}

// checkExecutions waits until every launched execution has ended, then
// checks in the store that each ended once (one row, terminal, one
// terminal event, one output file) and reads every input and output file
// through each replica directly.
func (w *workload) checkExecutions(t *testing.T, db *sql.DB, rs []*replica) execFigures {
	t.Helper()
	w.mu.Lock()
	runs := append([]run(nil), w.runs...)
	w.mu.Unlock()
	out := execFigures{launched: len(runs), failures: map[string]int{}}
	if len(runs) == 0 {
		t.Error("no execution was launched")
		return out
	}
	const budget = 90 * time.Second
	deadline := time.Now().Add(budget)
	for _, r := range runs {
		for {
			var status string
			var failure sql.NullString
			if err := db.QueryRow(`SELECT status, failure::text FROM executions WHERE id = $1`, r.execID).Scan(&status, &failure); err != nil {
				t.Fatalf("execution %s: %v", r.execID, err)
			}
			if status != "queued" && status != "running" {
				switch status {
				case "succeeded":
					out.succeeded++
				case "failed":
					out.failed++
					var f struct {
						Code string `json:"code"`
					}
					_ = json.Unmarshal([]byte(failure.String), &f)
					out.failures[f.Code]++
					if f.Code != "replica_lost" {
						t.Errorf("execution %s failed with %s; only replica_lost (it ran on the killed replica) is expected", r.execID, failure.String)
					}
				default:
					t.Errorf("execution %s ended %s", r.execID, status)
				}
				break
			}
			if time.Now().After(deadline) {
				var job string
				_ = db.QueryRow(`SELECT concat_ws(' ', state, attempt, attempted_by::text, attempted_at::text) FROM river_job WHERE args->>'execution_id' = $1 ORDER BY id DESC LIMIT 1`, r.execID).Scan(&job)
				t.Fatalf("execution %s still %s %s after the run; its River job: %s", r.execID, status, budget, job)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// A job the killed replica had fetched but not started is superseded by
	// a sweeper within runner.rescue_after (core/jobs/stranded.go): every
	// execution ended above, none waits for River's rescuer.
	if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'execute' AND args ? 'supersedes'`).Scan(&out.requeued); err != nil {
		t.Fatal(err)
	}
	// Exactly once: one terminal event, and at most one output file, per
	// execution.
	rows, err := db.Query(`SELECT object->>'id', count(*) FROM events WHERE event_code IN ('execution.succeeded','execution.failed') GROUP BY 1 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n int
		_ = rows.Scan(&id, &n)
		t.Errorf("execution %s ended %d times (terminal events)", id, n)
	}
	rows.Close()
	rows, err = db.Query(`SELECT execution_id, count(*) FROM files WHERE execution_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n int
		_ = rows.Scan(&id, &n)
		t.Errorf("execution %s wrote %d output files, want 1", id, n)
	}
	rows.Close()

	// Every file through every replica: the input as uploaded, the output
	// of a succeeded execution.
	for i, rep := range rs {
		c := &lbClient{base: "http://" + rep.addr, http: &http.Client{Timeout: attemptTimeout}}
		for _, r := range runs {
			if got, err := downloadVia(c, w.token, r.fileID); err != nil || !bytes.Equal(got, r.content) {
				t.Errorf("input file %s through replica %d: %v (%d bytes, want %d)", r.fileID, i, err, len(got), len(r.content))
			}
			out.downloads++
		}
	}
	rows, err = db.Query(`SELECT id FROM files WHERE execution_id IS NOT NULL AND status = 'ready'`)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		outputs = append(outputs, id)
	}
	rows.Close()
	if len(outputs) < out.succeeded {
		t.Errorf("%d output files for %d succeeded executions", len(outputs), out.succeeded)
	}
	for i, rep := range rs {
		c := &lbClient{base: "http://" + rep.addr, http: &http.Client{Timeout: attemptTimeout}}
		for _, id := range outputs {
			if got, err := downloadVia(c, w.token, id); err != nil || !strings.Contains(string(got), "PIX RECEBIDO ACME") {
				t.Errorf("output file %s through replica %d: %v %q", id, i, err, clip(got))
			}
			out.downloads++
		}
	}
	return out
}

// downloadVia asks c for file id's download URL and fetches it.
func downloadVia(c *lbClient, token, id string) ([]byte, error) {
	a, err := c.rest(token, "GET", "/files/"+id+"/download", "", true)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("download URL: %d %s", a.status, clip(a.body))
	}
	url, _ := a.json()["url"].(string)
	res, err := c.http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET download: %d %s", res.StatusCode, clip(body))
	}
	return body, err
}
