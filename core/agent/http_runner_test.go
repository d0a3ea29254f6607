package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const serviceToken = "svc-token-123"

// fakeService implements the agent service protocol for tests; each test
// scripts the answers to create and get.
type fakeService struct {
	t *testing.T

	// scripted answers; n counts calls from 0
	create func(n int, req *wireCreateRun) (status int, body string)
	get    func(n int) (status int, body string)
	files  map[string]string // file id → content

	mu       sync.Mutex
	creates  []*wireCreateRun
	keys     []string // Idempotency-Key of each create
	gets     int
	cancels  []string // run ids
	badAuths int
}

func newFakeService(t *testing.T) (*fakeService, *httptest.Server) {
	f := &fakeService{t: t, files: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		var req wireCreateRun
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("create body: %v", err)
		}
		f.mu.Lock()
		n := len(f.creates)
		f.creates = append(f.creates, &req)
		f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
		f.mu.Unlock()
		status, body := f.create(n, &req)
		reply(w, status, body)
	})
	mux.HandleFunc("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		n := f.gets
		f.gets++
		f.mu.Unlock()
		status, body := f.get(n)
		if status == -1 { // hang until the client gives up
			<-r.Context().Done()
			return
		}
		reply(w, status, body)
	})
	mux.HandleFunc("GET /v1/runs/{id}/files/{file}", func(w http.ResponseWriter, r *http.Request) {
		content, ok := f.files[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, content)
	})
	mux.HandleFunc("POST /v1/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.cancels = append(f.cancels, r.PathValue("id"))
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+serviceToken {
			f.mu.Lock()
			f.badAuths++
			f.mu.Unlock()
			reply(w, http.StatusUnauthorized, `{"error":"unauthorized"}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func reply(w http.ResponseWriter, status int, body string) {
	ct := "application/json"
	if strings.HasPrefix(body, "text:") {
		ct, body = "text/html", strings.TrimPrefix(body, "text:")
	}
	if strings.HasPrefix(body, "retry-after:") {
		secs, rest, _ := strings.Cut(strings.TrimPrefix(body, "retry-after:"), ":")
		w.Header().Set("Retry-After", secs)
		body = rest
	}
	if strings.HasPrefix(body, "location:") {
		w.Header().Set("Location", strings.TrimPrefix(body, "location:"))
		body = ""
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (f *fakeService) snapshot() (creates []*wireCreateRun, keys []string, gets int, cancels []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.creates), slices.Clone(f.keys), f.gets, slices.Clone(f.cancels)
}

// runJSON builds a Run answer.
func runJSON(t *testing.T, id, status string, cost int64, extra map[string]any) string {
	t.Helper()
	m := map[string]any{"run_id": id, "status": status, "cost_cents": cost}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wstep(id, typ, status string, cost int64) map[string]any {
	s := map[string]any{"id": id, "type": typ, "status": status, "cost_cents": cost, "started_at": "2026-04-01T12:00:00-03:00"}
	if status != "running" {
		s["finished_at"] = "2026-04-01T12:00:02-03:00"
	}
	return s
}

func fastOptions() *HTTPOptions {
	return &HTTPOptions{
		PollInterval: 5 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond,
		RetryBaseDelay: 5 * time.Millisecond, MaxRetryDelay: 2 * time.Second, MaxRetries: 3,
		RequestTimeout: 2 * time.Second,
	}
}

func newTestHTTPRunner(t *testing.T, srv *httptest.Server, opts *HTTPOptions) *HTTPRunner {
	t.Helper()
	if opts == nil {
		opts = fastOptions()
	}
	r, err := NewHTTPRunner(srv.URL, serviceToken, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func httpJob() *Job {
	return &Job{
		ExecutionID: "exe_h1", TaskID: "tsk_h1", OrgID: "org_1", Instructions: "Reconcile March.",
		Playbook: json.RawMessage(`{"steps":[{"type":"ask","params":{"prompt":"x"}}]}`),
		Input:    json.RawMessage(`{"period":"2026-03"}`),
		Files: []InputFile{{ID: "file_1", Filename: "extrato.ofx", ContentType: "application/x-ofx", Size: 42,
			DownloadURL: func(context.Context) (string, error) { return "https://kadu.test/dl/file_1?sig=abc", nil }}},
		MaxCostCents: 100,
	}
}

func TestHTTPRunnerSucceeds(t *testing.T) {
	f, srv := newFakeService(t)
	f.files["f1"] = "status,receivable_id\nmatched,F1\n"
	f.create = func(n int, req *wireCreateRun) (int, string) {
		return 201, runJSON(t, "run_1", "queued", 0, nil)
	}
	f.get = func(n int) (int, string) {
		switch n {
		case 0:
			return 200, runJSON(t, "run_1", "running", 0, map[string]any{"steps": []any{wstep("parse", "parse_statement", "running", 0)}})
		case 1:
			return 200, runJSON(t, "run_1", "running", 5, map[string]any{"steps": []any{wstep("parse", "parse_statement", "succeeded", 5), wstep("recon", "reconcile", "running", 0)}})
		case 2, 3: // no progress: the poll delay grows
			return 200, runJSON(t, "run_1", "running", 5, map[string]any{"steps": []any{wstep("parse", "parse_statement", "succeeded", 5), wstep("recon", "reconcile", "running", 0)}})
		}
		return 200, runJSON(t, "run_1", "succeeded", 12, map[string]any{
			"steps": []any{wstep("parse", "parse_statement", "succeeded", 5), wstep("recon", "reconcile", "succeeded", 7)},
			"output": map[string]any{"summary": "43 of 46 receivables matched", "data": map[string]any{"matched": 43},
				"files": []any{map[string]any{"id": "f1", "filename": "conciliacao.csv", "content_type": "text/csv", "size_bytes": len(f.files["f1"])}}},
		})
	}
	sink := newMemSink()
	out, err := newTestHTTPRunner(t, srv, nil).Run(context.Background(), httpJob(), sink)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if out.Status != StatusSucceeded || out.CostCents != 12 || out.Output.Summary != "43 of 46 receivables matched" ||
		string(out.Output.Data) != `{"matched":43}` || len(out.Output.FileIDs) != 1 || out.State != nil {
		t.Fatalf("outcome = %+v", out)
	}
	if want := []int64{5, 7}; !slices.Equal(sink.chargesCopy(), want) {
		t.Errorf("charges = %v, want %v", sink.chargesCopy(), want)
	}
	if data, ok := sink.fileNamed("conciliacao.csv"); !ok || string(data) != f.files["f1"] {
		t.Errorf("output file = %q, %v", data, ok)
	}
	var statuses []string
	for _, e := range sink.events {
		statuses = append(statuses, e.ID+":"+string(e.Status))
	}
	if want := []string{"parse:running", "parse:succeeded", "recon:running", "recon:succeeded"}; !slices.Equal(statuses, want) {
		t.Errorf("steps recorded = %v, want %v (each change once)", statuses, want)
	}
	creates, keys, _, cancels := f.snapshot()
	if len(creates) != 1 || len(cancels) != 0 {
		t.Fatalf("%d creates, cancels %v", len(creates), cancels)
	}
	req := creates[0]
	if req.ExecutionID != "exe_h1" || req.OrgID != "org_1" || string(req.Input) != `{"period":"2026-03"}` || req.Resume != nil ||
		len(req.Files) != 1 || req.Files[0].DownloadURL != "https://kadu.test/dl/file_1?sig=abc" || req.MaxCostCents == nil || *req.MaxCostCents != 100 ||
		!strings.Contains(string(req.Playbook), `"ask"`) || string(req.State) != "null" {
		t.Errorf("create request = %+v", req)
	}
	if len(keys[0]) != 32 {
		t.Errorf("Idempotency-Key = %q", keys[0])
	}
}

func TestHTTPRunnerRetries503ThenSucceeds(t *testing.T) {
	f, srv := newFakeService(t)
	f.create = func(n int, _ *wireCreateRun) (int, string) {
		if n == 0 {
			return 503, `retry-after:1:{"error":"warming up"}`
		}
		return 201, runJSON(t, "run_2", "succeeded", 3, map[string]any{"output": map[string]any{"summary": "ok"}})
	}
	f.get = func(int) (int, string) { return 500, "" }
	start := time.Now()
	out, err := newTestHTTPRunner(t, srv, nil).Run(context.Background(), httpJob(), newMemSink())
	if err != nil || out.Status != StatusSucceeded {
		t.Fatalf("Run() = %+v, %v", out, err)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("retried after %v, want Retry-After: 1 honoured", elapsed)
	}
	_, keys, gets, _ := f.snapshot()
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Errorf("Idempotency-Keys = %v, want the same key twice", keys)
	}
	if gets != 0 {
		t.Errorf("%d polls of a run created finished", gets)
	}
}

func TestHTTPRunnerRetriesPolls(t *testing.T) {
	f, srv := newFakeService(t)
	f.create = func(int, *wireCreateRun) (int, string) { return 201, runJSON(t, "run_3", "running", 0, nil) }
	f.get = func(n int) (int, string) {
		switch n {
		case 0:
			return 429, `retry-after:0:{}`
		case 1:
			return 502, "text:<html>bad gateway</html>"
		}
		return 200, runJSON(t, "run_3", "succeeded", 0, nil)
	}
	out, err := newTestHTTPRunner(t, srv, nil).Run(context.Background(), httpJob(), newMemSink())
	if err != nil || out.Status != StatusSucceeded {
		t.Fatalf("Run() = %+v, %v", out, err)
	}
}

func TestHTTPRunnerUnavailable(t *testing.T) {
	f, srv := newFakeService(t)
	f.create = func(int, *wireCreateRun) (int, string) { return 503, "{}" }
	opts := fastOptions()
	opts.MaxRetries = 2
	_, err := newTestHTTPRunner(t, srv, opts).Run(context.Background(), httpJob(), newMemSink())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Run() error = %v, want ErrUnavailable", err)
	}
	if creates, _, _, _ := f.snapshot(); len(creates) != 3 {
		t.Errorf("%d attempts, want 3", len(creates))
	}
}

func TestHTTPRunnerCancelsSlowRun(t *testing.T) {
	tests := []struct {
		name string
		get  func(n int) (int, string)
	}{
		{name: "between polls", get: func(int) (int, string) { return 200, `{"run_id":"run_slow","status":"running","cost_cents":0}` }},
		{name: "during a hanging poll", get: func(int) (int, string) { return -1, "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeService(t)
			f.create = func(int, *wireCreateRun) (int, string) {
				return 201, runJSON(t, "run_slow", "running", 0, map[string]any{"steps": []any{wstep("think", "llm", "running", 0)}})
			}
			f.get = tt.get
			opts := fastOptions()
			opts.RequestTimeout = 10 * time.Second
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			sink := newMemSink()
			out, err := newTestHTTPRunner(t, srv, opts).Run(ctx, httpJob(), sink)
			if !errors.Is(err, context.Canceled) || out != nil {
				t.Fatalf("Run() = %+v, %v; want context.Canceled", out, err)
			}
			if s := sink.steps["think"]; s.Status != StepCancelled || s.FinishedAt.IsZero() {
				t.Errorf("running step after cancellation = %+v, want cancelled", s)
			}
			_, _, _, cancels := f.snapshot()
			if !slices.Equal(cancels, []string{"run_slow"}) {
				t.Errorf("cancels = %v, want the run cancelled on the service", cancels)
			}
		})
	}
}

func TestHTTPRunnerCancellationIsPrompt(t *testing.T) {
	f, srv := newFakeService(t)
	f.create = func(int, *wireCreateRun) (int, string) {
		return 201, `{"run_id":"run_slow","status":"running","cost_cents":0}`
	}
	f.get = func(int) (int, string) { return -1, "" }
	opts := fastOptions()
	opts.RequestTimeout = 30 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan time.Time, 1)
	go func() {
		_, _ = newTestHTTPRunner(t, srv, opts).Run(ctx, httpJob(), newMemSink())
		done <- time.Now()
	}()
	time.Sleep(150 * time.Millisecond)
	cancel()
	cancelled := time.Now()
	select {
	case end := <-done:
		if d := end.Sub(cancelled); d > 1500*time.Millisecond {
			t.Errorf("Run returned %v after cancellation, want within 1.5 s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestHTTPRunnerProtocolViolations(t *testing.T) {
	ok := func(id string) string { return fmt.Sprintf(`{"run_id":%q,"status":"running","cost_cents":10}`, id) }
	tests := []struct {
		name       string
		create     string // body of a 201, or "status:body"
		createCode int
		get        string
		wantCancel bool
	}{
		{name: "garbage JSON", create: ok("r"), get: `{"run_id": "r", "status": `, wantCancel: true},
		{name: "not JSON at all", create: ok("r"), get: "text:<html>oops</html>", wantCancel: true},
		{name: "trailing data", create: ok("r"), get: ok("r") + ` {}`, wantCancel: true},
		{name: "unknown member", create: ok("r"), get: `{"run_id":"r","status":"running","cost_cents":10,"eta":5}`, wantCancel: true},
		{name: "unknown status", create: ok("r"), get: `{"run_id":"r","status":"thinking","cost_cents":10}`, wantCancel: true},
		{name: "waiting without pending_input", create: ok("r"), get: `{"run_id":"r","status":"waiting_input","cost_cents":10}`, wantCancel: true},
		{name: "failed without failure", create: ok("r"), get: `{"run_id":"r","status":"failed","cost_cents":10}`, wantCancel: true},
		{name: "cost going down", create: ok("r"), get: `{"run_id":"r","status":"running","cost_cents":3}`, wantCancel: true},
		{name: "negative cost", create: ok("r"), get: `{"run_id":"r","status":"running","cost_cents":-1}`, wantCancel: true},
		{name: "another run", create: ok("r"), get: ok("other"), wantCancel: true},
		{name: "bad step", create: ok("r"), get: `{"run_id":"r","status":"running","cost_cents":10,"steps":[{"id":"a/b","type":"x","status":"running","cost_cents":0}]}`, wantCancel: true},
		{name: "control characters", create: ok("r"), get: `{"run_id":"r","status":"failed","cost_cents":10,"failure":{"code":"error","message":"a\u001b[31mb"}}`, wantCancel: true},
		{name: "path in a file name", create: ok("r"), get: `{"run_id":"r","status":"succeeded","cost_cents":10,"output":{"summary":"","files":[{"id":"f","filename":"../../etc/passwd","content_type":"text/plain","size_bytes":1}]}}`, wantCancel: true},
		{name: "response too large", create: ok("r"), get: `{"run_id":"r","status":"running","cost_cents":10,"state":"` + strings.Repeat("x", 70_000) + `"}`, wantCancel: true},
		{name: "unexpected status on poll", create: ok("r"), get: "404:{}", wantCancel: true},
		{name: "bad run id on create", create: `{"run_id":"../admin","status":"running","cost_cents":0}`},
		{name: "redirect on create", createCode: 302, create: "location:https://evil.test/"},
		{name: "400 on create", createCode: 400, create: `{"error":"bad"}`},
		{name: "422 without failure", createCode: 422, create: `{"error":"bad"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeService(t)
			f.create = func(int, *wireCreateRun) (int, string) {
				if tt.createCode != 0 {
					return tt.createCode, tt.create
				}
				return 201, tt.create
			}
			f.get = func(int) (int, string) {
				if code, body, found := strings.Cut(tt.get, ":"); found && len(code) == 3 && code[0] >= '1' && code[0] <= '9' {
					var c int
					fmt.Sscan(code, &c)
					return c, body
				}
				return 200, tt.get
			}
			opts := fastOptions()
			opts.MaxResponseBytes = 64 << 10
			_, err := newTestHTTPRunner(t, srv, opts).Run(context.Background(), httpJob(), newMemSink())
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("Run() error = %v, want ErrProtocol", err)
			}
			if _, _, _, cancels := f.snapshot(); (len(cancels) == 1) != tt.wantCancel {
				t.Errorf("cancels = %v, want cancelled: %v", cancels, tt.wantCancel)
			}
		})
	}
}

func TestHTTPRunnerWrongCredential(t *testing.T) {
	f, srv := newFakeService(t)
	r, err := NewHTTPRunner(srv.URL, "not-the-token", fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), httpJob(), newMemSink())
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("Run() error = %v, want a protocol error naming the 401", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.badAuths != 1 {
		t.Errorf("%d unauthorised requests, want 1 (no retries on 401)", f.badAuths)
	}
}

func TestHTTPRunnerPauseAndResume(t *testing.T) {
	f, srv := newFakeService(t)
	f.create = func(n int, req *wireCreateRun) (int, string) {
		if n == 0 {
			return 201, runJSON(t, "run_a", "waiting_input", 4, map[string]any{
				"steps":         []any{wstep("parse", "parse_statement", "succeeded", 4), wstep("confirm", "approve", "waiting_input", 0)},
				"pending_input": map[string]any{"kind": "approval", "prompt": "Send the file?", "step_id": "confirm", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}}}},
				"output":        map[string]any{"summary": "ready to send"},
				"state":         map[string]any{"cursor": 3},
			})
		}
		return 201, runJSON(t, "run_b", "succeeded", 3, map[string]any{
			"steps":  []any{wstep("confirm", "approve", "succeeded", 0), wstep("send", "write_output", "succeeded", 3)},
			"output": map[string]any{"summary": "sent"},
		})
	}
	r := newTestHTTPRunner(t, srv, nil)
	sink := newMemSink()
	job := httpJob()
	first, err := r.Run(context.Background(), job, sink)
	if err != nil || first.Status != StatusWaitingInput || first.Pending.Kind != PendingApproval || first.Pending.StepID != "confirm" ||
		first.CostCents != 4 || first.Output.Summary != "ready to send" || first.State == nil {
		t.Fatalf("first run = %+v, %v", first, err)
	}

	job.State = first.State
	job.Resume = &Resume{StepID: "other", Answer: json.RawMessage(`{"approved":true}`)}
	if _, err := r.Run(context.Background(), job, sink); !errors.Is(err, ErrBadResume) {
		t.Fatalf("resume of another step: %v, want ErrBadResume", err)
	}

	job.Resume = &Resume{StepID: "confirm", Answer: json.RawMessage(`{"approved":true}`)}
	second, err := r.Run(context.Background(), job, sink)
	if err != nil || second.Status != StatusSucceeded || second.CostCents != 7 {
		t.Fatalf("resumed run = %+v, %v", second, err)
	}
	creates, keys, _, _ := f.snapshot()
	req := creates[1]
	if req.Resume == nil || req.Resume.StepID != "confirm" || string(req.Resume.Answer) != `{"approved":true}` ||
		string(req.State) != `{"cursor":3}` || *req.MaxCostCents != 96 {
		t.Errorf("resume request = %+v (state %s)", req, req.State)
	}
	if keys[0] == keys[1] {
		t.Error("the resumed segment reused the first segment's Idempotency-Key")
	}
	if want := []int64{4, 3}; !slices.Equal(sink.chargesCopy(), want) {
		t.Errorf("charges = %v, want %v", sink.chargesCopy(), want)
	}
	if s := sink.steps["confirm"]; s.Status != StepSucceeded {
		t.Errorf("paused step after resume = %+v", s)
	}
}

func TestHTTPRunnerCostCap(t *testing.T) {
	tests := []struct {
		name    string
		orgCap  int64
		maxCost int64
	}{
		{name: "organisation cap", orgCap: 10},
		{name: "execution max cost", maxCost: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeService(t)
			f.create = func(int, *wireCreateRun) (int, string) { return 201, runJSON(t, "run_c", "running", 0, nil) }
			f.get = func(int) (int, string) {
				return 200, runJSON(t, "run_c", "running", 25, map[string]any{"output": map[string]any{"summary": "half done", "data": map[string]any{"rows": 10}}})
			}
			sink := newMemSink()
			sink.capCents = tt.orgCap
			job := httpJob()
			job.MaxCostCents = tt.maxCost
			out, err := newTestHTTPRunner(t, srv, nil).Run(context.Background(), job, sink)
			if err != nil || out.Status != StatusFailed || out.Failure.Code != FailureCostCap {
				t.Fatalf("Run() = %+v, %v; want failed cost_cap_exceeded", out, err)
			}
			if out.Output.Summary != "half done" || string(out.Output.Data) != `{"rows":10}` || out.CostCents != 25 {
				t.Errorf("partial output = %+v, cost %d", out.Output, out.CostCents)
			}
			if _, _, _, cancels := f.snapshot(); !slices.Equal(cancels, []string{"run_c"}) {
				t.Errorf("cancels = %v, want the run cancelled", cancels)
			}
		})
	}
}

func TestHTTPRunnerServiceOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		body       string
		wantStatus Status
		wantCode   string
	}{
		{name: "refused at create", code: 422, body: `{"failure":{"code":"invalid_input","message":"period missing"}}`, wantStatus: StatusFailed, wantCode: "invalid_input"},
		{name: "failed run", code: 201, body: `{"run_id":"r","status":"failed","cost_cents":2,"failure":{"code":"timeout","message":"model took too long"}}`, wantStatus: StatusFailed, wantCode: "timeout"},
		{name: "cancelled by the service", code: 201, body: `{"run_id":"r","status":"cancelled","cost_cents":0}`, wantStatus: StatusFailed, wantCode: FailureError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeService(t)
			f.create = func(int, *wireCreateRun) (int, string) { return tt.code, tt.body }
			out, err := newTestHTTPRunner(t, srv, nil).Run(context.Background(), httpJob(), newMemSink())
			if err != nil || out.Status != tt.wantStatus || out.Failure == nil || out.Failure.Code != tt.wantCode {
				t.Fatalf("Run() = %+v, %v; want %s %s", out, err, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestNewHTTPRunner(t *testing.T) {
	tests := []struct {
		name, url, token string
		opts             *HTTPOptions
		wantErr          string
	}{
		{name: "https", url: "https://agent.kobana.test/base/", token: "t"},
		{name: "http on loopback", url: "http://127.0.0.1:8080", token: "t"},
		{name: "http on localhost", url: "http://localhost:8080", token: "t"},
		{name: "http elsewhere", url: "http://agent.kobana.test", token: "t", wantErr: "plain http"},
		{name: "http elsewhere allowed", url: "http://agent.kobana.test", token: "t", opts: &HTTPOptions{AllowInsecureHTTP: true}},
		{name: "relative", url: "/agent", token: "t", wantErr: "absolute"},
		{name: "credentials in URL", url: "https://u:p@agent.test", token: "t", wantErr: "without credentials"},
		{name: "other scheme", url: "ftp://agent.test", token: "t", wantErr: "absolute"},
		{name: "no token", url: "https://agent.test", token: "", wantErr: "token"},
		{name: "header injection", url: "https://agent.test", token: "t\r\nX-Evil: 1", wantErr: "token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHTTPRunner(tt.url, tt.token, tt.opts)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("NewHTTPRunner() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRetryAfterAndBackoff(t *testing.T) {
	h := http.Header{}
	if d := retryAfter(h, time.Minute); d != -1 {
		t.Errorf("absent = %v", d)
	}
	h.Set("Retry-After", "3")
	if d := retryAfter(h, time.Minute); d != 3*time.Second {
		t.Errorf("seconds = %v", d)
	}
	if d := retryAfter(h, time.Second); d != time.Second {
		t.Errorf("capped = %v", d)
	}
	h.Set("Retry-After", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
	if d := retryAfter(h, time.Minute); d != 0 {
		t.Errorf("date in the past = %v", d)
	}
	h.Set("Retry-After", "soon")
	if d := retryAfter(h, time.Minute); d != -1 {
		t.Errorf("garbage = %v", d)
	}
	for attempt := range 40 {
		d := backoff(attempt, 250*time.Millisecond, 10*time.Second)
		ceiling := min(250*time.Millisecond<<min(attempt, 20), 10*time.Second)
		if attempt > 20 {
			ceiling = 10 * time.Second
		}
		if d < ceiling/2 || d > ceiling {
			t.Errorf("backoff(%d) = %v, want in [%v, %v]", attempt, d, ceiling/2, ceiling)
		}
	}
}
