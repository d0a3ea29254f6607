package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store/pgtest"
)

// slowAgent is an agent service (core/agent/HTTP_RUNNER.md) whose runs
// stay running, having cost 5 centavos, until fast is set; runs created
// after that succeed at once, having cost doneCents.
type slowAgent struct {
	mu        sync.Mutex
	fast      bool
	doneCents int
	runs      map[string]string // run id → status
}

func newSlowAgent(t *testing.T) (*slowAgent, string) {
	a := &slowAgent{runs: map[string]string{}, doneCents: 1}
	srv := httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	return a, srv.URL
}

func (a *slowAgent) setFast() {
	a.mu.Lock()
	a.fast = true
	a.mu.Unlock()
}

func (a *slowAgent) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	var id string
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/runs":
		var req struct {
			ExecutionID string `json:"execution_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id = "run_" + req.ExecutionID
		if _, ok := a.runs[id]; !ok {
			a.runs[id] = map[bool]string{false: "running", true: "succeeded"}[a.fast]
			w.WriteHeader(http.StatusCreated)
		}
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel"):
		w.WriteHeader(http.StatusNoContent)
		return
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/runs/"):
		id = strings.TrimPrefix(r.URL.Path, "/v1/runs/")
	default:
		http.NotFound(w, r)
		return
	}
	switch a.runs[id] {
	case "running":
		fmt.Fprintf(w, `{"run_id":%q,"status":"running","cost_cents":5}`, id)
	case "succeeded":
		fmt.Fprintf(w, `{"run_id":%q,"status":"succeeded","cost_cents":%d,"output":{"summary":"done"}}`, id, a.doneCents)
	default:
		http.NotFound(w, r)
	}
}

// apiClient calls the REST API of one server with a token.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

func (c apiClient) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+"/api/v1"+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			c.t.Fatalf("%s %s: %d %s: %v", method, path, res.StatusCode, raw, err)
		}
	}
	return res.StatusCode, out
}

// launch runs task and returns the execution's id.
func (c apiClient) launch(task string) string {
	c.t.Helper()
	status, body := c.do(http.MethodPost, "/tasks/"+task+"/run", `{}`)
	if status != http.StatusAccepted {
		c.t.Fatalf("run: %d %v", status, body)
	}
	return body["id"].(string)
}

// execution is what the tests read of GET /executions/{id}.
type execution struct {
	Status  string
	Code    string // failure.code
	Message string // failure.message
	Cents   float64
}

func (c apiClient) execution(id string) execution {
	c.t.Helper()
	status, body := c.do(http.MethodGet, "/executions/"+id, "")
	if status != http.StatusOK {
		c.t.Fatalf("GET execution %s: %d %v", id, status, body)
	}
	e := execution{Status: body["status"].(string)}
	if f, ok := body["failure"].(map[string]any); ok {
		e.Code, _ = f["code"].(string)
		e.Message, _ = f["message"].(string)
	}
	if cost, ok := body["cost"].(map[string]any); ok {
		e.Cents, _ = cost["amount_cents"].(float64)
	}
	return e
}

// wait polls execution id until ok accepts it, for at most budget.
func (c apiClient) wait(id, what string, budget time.Duration, ok func(execution) bool) execution {
	c.t.Helper()
	deadline := time.Now().Add(budget)
	for {
		e := c.execution(id)
		if ok(e) {
			return e
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("execution %s is %+v after %s; want %s", id, e, budget, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// crashEnv is the environment of a `kadu serve` that runs executions
// through agentURL and gives up on a dead replica's runs after 2 s.
func crashEnv(t *testing.T, agentURL, publicAddr string, extra ...string) []string {
	return append(append(os.Environ(),
		"KADU_DATA_DIR="+t.TempDir(),
		"KADU_PUBLIC_URL=http://"+publicAddr,
		"KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef-shared",
		"KADU_RUNNER__KIND=http",
		"KADU_RUNNER__HTTP__URL="+agentURL,
		"KADU_RUNNER__HTTP__TOKEN=agent-service-credential",
		"KADU_RUNNER__RESCUE_AFTER=2s",
	), extra...)
}

func mintToken(t *testing.T, bin, cfgFile, addr string, env []string, org string) string {
	t.Helper()
	tok := exec.Command(bin, "token", "--config", cfgFile, "--addr", addr, "--org", org)
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// kill ends a `kadu serve` the way a crash or an OOM kill does: no drain,
// no hand-back of its runs.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait() // "signal: killed"
}

// crashScenario is what both databases check once the replica that ran
// two executions is dead: before is the server the test talks to
// afterwards (the restarted one, or the surviving replica).
//
// The organisation's plan (developer) runs 2 executions at once, so both
// slots are held by the dead replica until its runs are settled.
func crashScenario(t *testing.T, agent *slowAgent, c apiClient, running, cancelled string, killedAt time.Time) {
	t.Helper()
	// Within the rescue budget: 2 s of staleness, a sweep every 0.5 s;
	// generous for a busy machine, far below the default's minute.
	const budget = 60 * time.Second
	status, body := c.do(http.MethodPost, "/executions/"+cancelled+"/cancel", "")
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("cancel: %d %v", status, body)
	}
	e := c.wait(cancelled, "cancelled", budget, func(e execution) bool { return e.Status != "cancelling" && e.Status != "running" })
	if e.Status != "cancelled" {
		t.Errorf("cancelled execution of the dead replica ended %+v, want cancelled", e)
	}
	e = c.wait(running, "failed", budget, func(e execution) bool { return e.Status != "running" })
	if e.Status != "failed" || e.Code != "replica_lost" || e.Cents != 5 || !strings.Contains(e.Message, "launch the task again") {
		t.Errorf("running execution of the dead replica ended %+v; want failed with replica_lost, the 5 centavos kept", e)
	}
	t.Logf("settled %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	// The organisation's next run is not held behind the dead replica's.
	agent.setFast()
	next := c.launch(c.taskID())
	e = c.wait(next, "succeeded", budget, func(e execution) bool { return e.Status == "succeeded" || e.Status == "failed" })
	if e.Status != "succeeded" {
		t.Errorf("next execution ended %+v, want succeeded", e)
	}
}

// taskID creates the task the crash tests run: the slow agent's work.
func (c apiClient) taskID() string {
	c.t.Helper()
	status, body := c.do(http.MethodPost, "/tasks", `{"name":"Slow reconciliation","instructions":"Take your time.","timeout_seconds":3600}`)
	if status != http.StatusCreated {
		c.t.Fatalf("create task: %d %v", status, body)
	}
	return body["id"].(string)
}

// startTwo launches two executions of a new task and waits until both run
// on the agent with their cost metered.
func startTwo(t *testing.T, c apiClient) (string, string) {
	t.Helper()
	task := c.taskID()
	a, b := c.launch(task), c.launch(task)
	for _, id := range []string{a, b} {
		c.wait(id, "running with 5 centavos metered", 60*time.Second, func(e execution) bool { return e.Status == "running" && e.Cents == 5 })
	}
	return a, b
}

// TestCrashedServerSQLite kills a real `kadu serve` (SIGKILL) while two
// executions run, restarts it on the same SQLite database, and checks that
// neither is stranded: the running one fails with replica_lost keeping its
// cost, a cancel of the other ends cancelled, and the organisation's next
// run starts and succeeds.
func TestCrashedServerSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts servers")
	}
	bin := buildKadu(t)
	agent, agentURL := newSlowAgent(t)
	addr := freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: warn\n"+noBundles)
	env := crashEnv(t, agentURL, addr)
	args := []string{"serve", "--config", cfgFile, "--addr", addr, "--admin-addr", freeAddr(t)}
	first := serveProcess(t, bin, env, "", args...)
	c := apiClient{t: t, base: "http://" + addr, token: mintToken(t, bin, cfgFile, addr, env, "org_crash")}

	running, cancelled := startTwo(t, c)
	kill(t, first)
	killedAt := time.Now()

	serveProcess(t, bin, env, "", args...)
	for _, id := range []string{running, cancelled} {
		if e := c.execution(id); e.Status != "running" {
			t.Fatalf("after the restart %s is %+v, want still running (nothing settled it yet)", id, e)
		}
	}
	crashScenario(t, agent, c, running, cancelled, killedAt)
}

// TestCrashedReplicaPostgres runs two real `kadu serve` replicas on one
// PostgreSQL database, kills (SIGKILL) the one running two executions, and
// checks that the surviving replica settles them: the running one fails
// with replica_lost keeping its cost, a cancel of the other ends
// cancelled, and the organisation's next run starts and succeeds.
func TestCrashedReplicaPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts servers")
	}
	bin := buildKadu(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	agent, agentURL := newSlowAgent(t)
	addr1, addr2 := freeAddr(t), freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: warn\n"+noBundles)
	// The replicas share crashEnv's data dir (the dev issuer's keys, the
	// blobs), which stands in for the shared issuer and bucket of a real
	// deployment: hence single_node.
	env := crashEnv(t, agentURL, addr1, "KADU_STORE__DRIVER=postgres", "KADU_STORE__DSN="+dsn, "KADU_SINGLE_NODE=true")

	// Only the first replica runs while the executions start.
	first := serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr1, "--admin-addr", freeAddr(t))
	token := mintToken(t, bin, cfgFile, addr1, env, "org_crash")
	running, cancelled := startTwo(t, apiClient{t: t, base: "http://" + addr1, token: token})

	serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr2, "--admin-addr", freeAddr(t))
	kill(t, first)
	killedAt := time.Now()
	crashScenario(t, agent, apiClient{t: t, base: "http://" + addr2, token: token}, running, cancelled, killedAt)
}
