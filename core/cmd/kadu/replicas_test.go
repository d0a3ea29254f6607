//go:build replicas

package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for the checks on the store

	"github.com/kobana/kadu/core/store/pgtest"
	"github.com/kobana/kadu/core/webhook"
)

// TestReplicasBehindNginx runs three real `kadu serve` replicas on one
// PostgreSQL database, an S3-compatible bucket (gofakes3, the S3 wire over
// HTTP) and an external issuer, behind Debian's nginx, and drives a mixed
// workload through nginx while one replica is killed (SIGKILL) and
// restarted, another is restarted with SIGTERM (drain), and a bundle is
// hot-swapped on every replica. Then: no request failed except those the
// protocol allows to retry, every execution finished once, every webhook
// event was delivered with a valid signature, every file is readable
// through each replica, and the rate limit is one limit across replicas.
//
// REPLICAS_DURATION (a Go duration, default 60s) sets how long the
// workload runs. Run it with:
//
//	go test -tags replicas -count=1 -run TestReplicasBehindNginx -v ./core/cmd/kadu
func TestReplicasBehindNginx(t *testing.T) {
	nginx := nginxBinary()
	if nginx == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed: .ci/toolchains installs it (apt-get install nginx)")
		}
		t.Skip("nginx is not installed (apt-get install nginx); the multi-replica test needs it as the load balancer")
	}
	duration := 60 * time.Second
	if s := os.Getenv("REPLICAS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("REPLICAS_DURATION=%q: %v", s, err)
		}
		duration = d
	}

	// Build what the replicas run.
	bin := buildKadu(t)
	firstParty := map[string]bundleFile{}
	for _, name := range []string{"tasks", "executions", "files", "webhooks"} {
		firstParty[name] = buildBundle(t, "../../../plugins/"+name)
	}
	swapV1 := buildBundle(t, "../../app/testdata/swapguest/v1")
	swapV2 := buildBundle(t, "../../app/testdata/swapguest/v2")

	// The shared services.
	dsn := pgtest.Shared(t).NewDatabase(t)
	s3 := startS3(t, "kadu-files")
	lbAddr := freeAddr(t)
	lbURL := "http://" + lbAddr
	iss := startIssuer(t, lbURL+"/mcp")
	cacheDir := t.TempDir()
	rc := replicaConfig{publicURL: lbURL, issuer: iss.url, s3: s3, firstParty: firstParty, swap: swapV1, cacheDir: cacheDir}
	cfgFile := filepath.Join(t.TempDir(), "kadu.yaml")
	writeFile(t, cfgFile, rc.yaml())
	none := filepath.Join(t.TempDir(), "none")
	env := append(os.Environ(),
		"KADU_STORE__DRIVER=postgres",
		"KADU_STORE__DSN="+dsn,
		"KADU_API__SIGNING_KEY="+sharedSigningKey,
		"AWS_ACCESS_KEY_ID=AKIDKADUREPLICAS",
		"AWS_SECRET_ACCESS_KEY=replicas-test-secret",
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=",
		"AWS_CONFIG_FILE="+none, "AWS_SHARED_CREDENTIALS_FILE="+none,
		"AWS_EC2_METADATA_DISABLED=true",
		// gofakes3 sends no response checksums; the SDK would warn on every read.
		"AWS_RESPONSE_CHECKSUM_VALIDATION=when_required",
	)

	// The first replica migrates the database and fills the compilation
	// cache; the other two then start together.
	replicas := make([]*replica, 3)
	for i := range replicas {
		replicas[i] = newReplica(t, bin, cfgFile, env)
		t.Cleanup(replicas[i].close)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, r := range replicas {
				t.Logf("replica %d (%s) stderr (last 4 KiB):\n%s", i, r.addr, tail([]byte(r.output()), 4096))
			}
		}
	})
	const readyBudget = 3 * time.Minute
	if err := replicas[0].start(readyBudget); err != nil {
		t.Fatal(err)
	}
	startAll(t, replicas[1:], readyBudget)
	startNginx(t, nginx, lbAddr, []string{replicas[0].addr, replicas[1].addr, replicas[2].addr})

	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	rec := &recorder{}
	lb := &lbClient{base: lbURL, rec: rec, http: &http.Client{Timeout: attemptTimeout}}
	const org = workloadOrg
	token := iss.token(t, org, "owner")

	// Setup through the balancer: the webhook, the task the files run.
	hooks := newHookSink(t)
	a, err := lb.rest(token, "POST", "/webhooks", `{"url":"`+hooks.url+`","event_codes":["execution.succeeded","execution.failed"],"idempotency_key":"hook-1"}`, true)
	if err != nil || a.status != http.StatusCreated {
		t.Fatalf("create webhook: %v %d %s", err, a.status, clip(a.body))
	}
	hooks.setSecret(a.json()["secret"].(string))
	a, err = lb.rest(token, "POST", "/tasks", playbookTask, true)
	if err != nil || a.status != http.StatusCreated {
		t.Fatalf("create task: %v %d %s", err, a.status, clip(a.body))
	}
	taskID := a.json()["id"].(string)

	w := &workload{t: t, lb: lb, rec: rec, token: token, taskID: taskID, s3: &http.Client{Timeout: attemptTimeout}}
	ctx, stop := context.WithTimeout(context.Background(), duration)
	defer stop()
	began := time.Now()
	var wg sync.WaitGroup
	approver := func(ctx context.Context) { w.approver(ctx, lbURL) }
	for _, run := range []func(context.Context){w.reader, w.reader, w.destructive, approver, w.files, w.files} {
		wg.Add(1)
		go func() { defer wg.Done(); run(ctx) }()
	}

	// The faults, spread over the run.
	faultErr := make(chan error, 1)
	go func() {
		faultErr <- runFaults(ctx, duration, began, rec, replicas, func() error {
			rc.swap = swapV2
			writeFile(t, cfgFile, rc.yaml())
			return nil
		}, w)
	}()
	wg.Wait()
	if err := <-faultErr; err != nil {
		t.Fatalf("fault injection: %v", err)
	}
	elapsed := time.Since(began)

	// After the swap every replica answers with v2.
	for i, r := range replicas {
		direct := &lbClient{base: "http://" + r.addr, http: &http.Client{Timeout: attemptTimeout}}
		if v, err := swapVersion(direct, token); err != nil || v != "2.0.0" {
			t.Errorf("replica %d after the hot swap: swap_version = %q, %v; want 2.0.0", i, v, err)
		}
	}
	if n := w.staleAfterSwap.Load(); n > 0 {
		t.Errorf("%d swap_version calls begun after every replica had reloaded were answered by 1.0.0", n)
	}

	execs := w.checkExecutions(t, db, replicas)
	delivered := hooks.check(t, db, org, 2*time.Minute)
	limited := checkSharedLimit(t, db, iss, replicas)

	f := rec.figures()
	for _, msg := range f.failures[:min(len(f.failures), 20)] {
		t.Errorf("failed request: %s", msg)
	}
	if len(f.failures) > 20 {
		t.Errorf("… and %d more failed requests", len(f.failures)-20)
	}
	t.Logf("figures:\n%s", f.markdown(elapsed, execs, delivered, limited, w))
}

// startAll starts replicas at once and waits for every one.
func startAll(t *testing.T, rs []*replica, budget time.Duration) {
	t.Helper()
	errs := make(chan error, len(rs))
	for _, r := range rs {
		go func() { errs <- r.start(budget) }()
	}
	for range rs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// runFaults kills replica 0 (SIGKILL) at a sixth of the run and restarts
// it, restarts replica 1 with SIGTERM (it drains) at five twelfths, and
// hot-swaps the swap bundle on every replica, one after the other, at two
// thirds: swap rewrites the configuration, then each replica's admin
// endpoint reloads it.
func runFaults(ctx context.Context, d time.Duration, began time.Time, rec *recorder, rs []*replica, swap func() error, w *workload) error {
	sleepUntil := func(at time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(began.Add(at))):
			return true
		}
	}
	const restartBudget = 2 * time.Minute
	if !sleepUntil(d / 6) {
		return fmt.Errorf("the run ended before the SIGKILL")
	}
	start := time.Now()
	w.killedAt.Store(start.UnixNano())
	if err := rs[0].stop(syscall.SIGKILL, 30*time.Second); err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := rs[0].start(restartBudget); err != nil {
		return fmt.Errorf("restart after SIGKILL: %w", err)
	}
	rec.fault(window{name: "SIGKILL + restart", start: start, end: time.Now()})

	if !sleepUntil(d * 5 / 12) {
		return fmt.Errorf("the run ended before the SIGTERM")
	}
	start = time.Now()
	if err := rs[1].stop(syscall.SIGTERM, time.Minute); err != nil {
		return err
	}
	if err := rs[1].start(restartBudget); err != nil {
		return fmt.Errorf("restart after SIGTERM: %w", err)
	}
	rec.fault(window{name: "SIGTERM drain + restart", start: start, end: time.Now()})

	if !sleepUntil(d * 2 / 3) {
		return fmt.Errorf("the run ended before the hot swap")
	}
	start = time.Now()
	if err := swap(); err != nil {
		return err
	}
	admin := &http.Client{Timeout: 3 * time.Minute}
	for i, r := range rs {
		res, err := admin.Post("http://"+r.admin+"/admin/plugins/reload", "application/json", nil)
		if err != nil {
			return fmt.Errorf("reload replica %d: %w", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("reload replica %d: %d %s", i, res.StatusCode, clip(body))
		}
	}
	w.swappedAt.Store(time.Now().UnixNano())
	rec.fault(window{name: "hot swap on every replica", start: start, end: time.Now()})
	return nil
}

// playbookTask reads its input file and writes an output file with the
// built-in runner: no agent service needed.
const playbookTask = `{"name":"Extrato por arquivo","description":"d","instructions":"i","idempotency_key":"task-1","playbook":{"version":1,"steps":[
	{"id":"ler","type":"parse_statement","params":{"source":{"file_index":0},"format":"csv"}},
	{"id":"cat","type":"categorize"},
	{"id":"out","type":"write_output","params":{"content":"transactions","format":"csv","filename":"lancamentos.csv"}}]}}`

// statement is a small bank statement the built-in runner parses.
const statement = "Data;Lançamento;Documento;Valor (R$);Saldo (R$)\n" +
	"02/03/2026;SALDO ANTERIOR;;;15.230,45\n" +
	"02/03/2026;PIX RECEBIDO ACME COMERCIO LTDA;E0001;1.500,00;16.730,45\n" +
	"03/03/2026;PAGTO TITULO ENEL ENERGIA;;-412,37;16.278,18\n"

// hookSink is the webhook receiver: it records every delivery by event id
// and whether its signature verified.
type hookSink struct {
	url string

	mu       sync.Mutex
	secret   string
	received map[string]int // event id → deliveries with a valid signature
	invalid  []string
}

func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{received: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook"
	return h
}

func (h *hookSink) setSecret(s string) {
	h.mu.Lock()
	h.secret = s
	h.mu.Unlock()
}

func (h *hookSink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts, sig := r.Header.Get(webhook.HeaderID), r.Header.Get(webhook.HeaderTimestamp), r.Header.Get(webhook.HeaderSignature)
	h.mu.Lock()
	defer h.mu.Unlock()
	var unix int64
	_, _ = fmt.Sscan(ts, &unix)
	want, err := webhook.Sign([]string{h.secret}, id, time.Unix(unix, 0), body)
	valid := false
	if err == nil {
		for _, s := range strings.Fields(sig) {
			if s == want {
				valid = true
			}
		}
	}
	if !valid {
		h.invalid = append(h.invalid, fmt.Sprintf("event %s: signature %q does not verify (%v)", id, sig, err))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.received[id]++
	w.WriteHeader(http.StatusNoContent)
}

// check waits, for at most budget, until every execution event of org in
// the store has been received with a valid signature; it returns how many
// events and deliveries there were, and how many delivery jobs River's
// rescuer retried.
//
// A delivery whose job the killed replica was running when it died is
// retried by River's rescuer once the attempt's timeout (webhooks.timeout
// plus 10 s) and runner.rescue_after have passed, on its next round (every
// 30 s; core/jobs/deliver.go): well within budget. Every event must arrive.
func (h *hookSink) check(t *testing.T, db *sql.DB, org string, budget time.Duration) [3]int {
	t.Helper()
	deadline := time.Now().Add(budget)
	for {
		rows, err := db.Query(`SELECT id FROM events WHERE org_id = $1 AND event_code LIKE 'execution.%'`, org)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		events := 0
		h.mu.Lock()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			events++
			if h.received[id] == 0 {
				missing = append(missing, id)
			}
		}
		deliveries := 0
		for _, n := range h.received {
			deliveries += n
		}
		invalid := h.invalid
		h.mu.Unlock()
		rows.Close()
		if len(invalid) > 0 {
			t.Errorf("%d deliveries with an invalid signature, e.g. %s", len(invalid), invalid[0])
		}
		if len(missing) == 0 {
			var rescued int
			if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'webhook_deliver' AND errors::text LIKE '%Stuck job rescued%'`).Scan(&rescued); err != nil {
				t.Fatal(err)
			}
			return [3]int{events, deliveries, rescued}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d execution events not delivered after %s, e.g. %v", len(missing), events, budget, missing[:min(3, len(missing))])
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkSharedLimit spends the limit of an organisation on the plan tiny
// (60 requests a minute: a burst of 10, then one a second) by calling the
// three replicas in turn, directly. One shared limit allows about 10;
// three limits per replica would allow 30.
func checkSharedLimit(t *testing.T, db *sql.DB, iss *issuer, rs []*replica) [2]int {
	t.Helper()
	const org = "org_limited"
	if _, err := db.Exec(`INSERT INTO orgs (id, plan, created_at) VALUES ($1, 'tiny', now())`, org); err != nil {
		t.Fatalf("putting %s on the plan tiny: %v", org, err)
	}
	token := iss.token(t, org, "owner")
	began := time.Now()
	allowed, refused := 0, map[int]int{}
	const n = 45
	for i := range n {
		c := &lbClient{base: "http://" + rs[i%len(rs)].addr, http: &http.Client{Timeout: attemptTimeout}}
		req, _ := http.NewRequest(http.MethodGet, c.base+"/api/v1/usage", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatalf("GET /usage on replica %d: %v", i%len(rs), err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		switch res.StatusCode {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
			refused[i%len(rs)]++
		default:
			t.Fatalf("GET /usage on replica %d: %d", i%len(rs), res.StatusCode)
		}
	}
	maxAllowed := 10 + int(time.Since(began).Seconds()) + 1
	if allowed > maxAllowed || len(refused) != len(rs) {
		t.Errorf("rate limit through three replicas: %d of %d allowed (want at most %d: one shared limit), refusals by replica %v (want some on each)",
			allowed, n, maxAllowed, refused)
	}
	return [2]int{allowed, n - allowed}
}

// sha is the hex sha256 of s.
func sha(s []byte) string {
	sum := sha256.Sum256(s)
	return hex.EncodeToString(sum[:])
}

// workloadOrg is the organisation of the workload.
const workloadOrg = "org_replicas"
