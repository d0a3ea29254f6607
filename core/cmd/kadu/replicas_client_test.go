//go:build replicas

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The load balancer's client: every attempt through nginx is recorded
// with its outcome and latency, and an attempt the protocol allows to
// retry is retried with the same request (the same idempotency key).

// Outcomes of an attempt.
const (
	outcomeOK        = "ok"                                   // the answer the operation expected
	outcomeDrain     = "503 Retry-After (retried)"            // a draining or overloaded replica; nothing was done
	outcomeLost      = "502 upstream lost (retried)"          // the replica died with the request in flight; retried only when safe
	outcomeTransport = "transport error (retried)"            // nginx itself unreachable
	outcomeInUse     = "409 idempotency_key_in_use (retried)" // the key's first request still runs, or died with its replica
	maxAttempts      = 8
	attemptTimeout   = 90 * time.Second
)

type attempt struct {
	at      time.Time
	took    time.Duration
	outcome string
}

// recorder holds every attempt and every final failure.
type recorder struct {
	mu       sync.Mutex
	attempts []attempt
	failures []string
	held     int      // operations whose key an attempt lost with its replica held for a while
	faults   []window // when a fault was under way
}

type window struct {
	name       string
	start, end time.Time
}

func (r *recorder) add(a attempt) {
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
}

// heldBudget is how long a retry keeps meeting 409 idempotency_key_in_use
// after its first attempt was lost with its replica (502): the lost
// attempt holds the key until the store's idempotency lock runs out,
// http.write_timeout (60 s here) plus 30 s (core/app/deadline.go); then the
// retry takes the key over and runs the request. A little slack for a busy
// machine.
const heldBudget = 60*time.Second + 30*time.Second + 20*time.Second

// fail records a failed operation.
func (r *recorder) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) heldKey() {
	r.mu.Lock()
	r.held++
	r.mu.Unlock()
}

func (r *recorder) fault(w window) {
	r.mu.Lock()
	r.faults = append(r.faults, w)
	r.mu.Unlock()
}

// lbClient sends requests to base (nginx, or one replica directly).
type lbClient struct {
	base string
	rec  *recorder // nil: not recorded (direct calls to a replica)
	http *http.Client
}

// answer is one HTTP response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(a.body, &m)
	return m
}

// do sends the request, retrying what may be retried: 503 with
// Retry-After always (the replica did nothing); 502/504 and transport
// errors only when safe says the request is idempotent (a read, or a
// write carrying an idempotency key), since the replica may have acted.
func (c *lbClient) do(method, path string, body []byte, header http.Header, safe bool) (answer, error) {
	var last error
	lost := false           // an attempt was lost with its replica
	var heldSince time.Time // the first 409 in use after a lost attempt
	for n := 0; n < maxAttempts; n++ {
		req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
		if err != nil {
			return answer{}, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		began := time.Now()
		res, err := c.http.Do(req)
		var a answer
		if err == nil {
			a = answer{status: res.StatusCode, header: res.Header}
			a.body, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		took := time.Since(began)
		switch {
		case err != nil:
			c.record(began, took, outcomeTransport)
			last = err
			if !safe {
				return answer{}, fmt.Errorf("%s %s: %w (not retried: not idempotent)", method, path, err)
			}
			time.Sleep(200 * time.Millisecond)
		case a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != "":
			c.record(began, took, outcomeDrain)
			last = fmt.Errorf("503 Retry-After %s: %s", a.header.Get("Retry-After"), clip(a.body))
			wait, _ := strconv.Atoi(a.header.Get("Retry-After"))
			time.Sleep(min(time.Duration(wait)*time.Second, 500*time.Millisecond))
		case (a.status == http.StatusBadGateway || a.status == http.StatusGatewayTimeout) && safe:
			c.record(began, took, outcomeLost)
			lost = true
			last = fmt.Errorf("%d from nginx: %s", a.status, clip(a.body))
			time.Sleep(200 * time.Millisecond)
		case safe && keyInUse(a):
			c.record(began, took, outcomeInUse)
			last = fmt.Errorf("409 idempotency_key_in_use: %s", clip(a.body))
			if lost {
				// Held by the lost attempt: not a failed try while the
				// lock may still run.
				if heldSince.IsZero() {
					heldSince = began
					if c.rec != nil {
						c.rec.heldKey()
					}
				}
				if time.Since(heldSince) < heldBudget {
					n--
				} else {
					last = fmt.Errorf("key still held %s after the attempt lost with its replica: %s", heldBudget, clip(a.body))
				}
			}
			time.Sleep(time.Second) // its Retry-After
		default:
			c.record(began, took, outcomeOK) // the caller may still find the answer wrong (fail)
			return a, nil
		}
	}
	return answer{}, fmt.Errorf("%s %s: gave up after %d attempts: %w", method, path, maxAttempts, last)
}

// keyInUse reports whether a is 409 idempotency_key_in_use, from the REST
// API or inside a tool's error result (a tool calls the route).
func keyInUse(a answer) bool {
	if !bytes.Contains(a.body, []byte("idempotency_key_in_use")) {
		return false
	}
	return a.status == http.StatusConflict || a.status == http.StatusOK && bytes.Contains(a.body, []byte(`"isError":true`))
}

func (c *lbClient) record(at time.Time, took time.Duration, outcome string) {
	if c.rec != nil {
		c.rec.add(attempt{at: at, took: took, outcome: outcome})
	}
}

// rest calls /api/v1 with a token; body is JSON or empty.
func (c *lbClient) rest(token, method, path, body string, safe bool) (answer, error) {
	h := http.Header{"Authorization": {"Bearer " + token}}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return c.do(method, "/api/v1"+path, []byte(body), h, safe)
}

// mcp sends one era-2026 request; caps are the client's capabilities.
func (c *lbClient) mcp(token, caps, method, name, params string, safe bool) (answer, map[string]any, error) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	params += meta + "}"
	h := http.Header{
		"Authorization":        {"Bearer " + token},
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {method},
	}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	a, err := c.do(http.MethodPost, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`), h, safe)
	if err != nil {
		return a, nil, err
	}
	return a, a.json(), nil
}

// toolResult is the result of a tools/call, or an error saying what the
// client saw instead.
func toolResult(a answer, res map[string]any) (map[string]any, error) {
	result, _ := res["result"].(map[string]any)
	if a.status != http.StatusOK || result == nil {
		return nil, fmt.Errorf("HTTP %d, not a tool result: %s", a.status, clip(a.body))
	}
	if result["isError"] == true {
		return nil, fmt.Errorf("isError: %s", clip(a.body))
	}
	return result, nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// figures summarises the recorded attempts.
type figures struct {
	attempts           int
	byOutcome          map[string]int
	p50, p99           time.Duration
	faultAttempts      int
	faultP50, faultP99 time.Duration
	failures           []string
	held               int
	faults             []window
}

func (r *recorder) figures() figures {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := figures{attempts: len(r.attempts), byOutcome: map[string]int{}, failures: slices.Clone(r.failures), held: r.held, faults: slices.Clone(r.faults)}
	var all, during []time.Duration
	for _, a := range r.attempts {
		f.byOutcome[a.outcome]++
		all = append(all, a.took)
		for _, w := range r.faults {
			if !a.at.Before(w.start) && a.at.Before(w.end) {
				during = append(during, a.took)
				break
			}
		}
	}
	f.p50, f.p99 = quantile(all, 0.5), quantile(all, 0.99)
	f.faultAttempts = len(during)
	f.faultP50, f.faultP99 = quantile(during, 0.5), quantile(during, 0.99)
	return f
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond)
}

// markdown renders the figures as the table of docs/operations.md.
func (f figures) markdown(elapsed time.Duration, ex execFigures, hooks [3]int, limit [2]int, w *workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Figure | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Workload duration | %s |\n", elapsed.Round(time.Second))
	fmt.Fprintf(&b, "| Requests through nginx (attempts) | %d |\n", f.attempts)
	for _, k := range []string{outcomeOK, outcomeDrain, outcomeLost, outcomeInUse, outcomeTransport} {
		fmt.Fprintf(&b, "| — %s | %d |\n", k, f.byOutcome[k])
	}
	fmt.Fprintf(&b, "| Failed requests (after the allowed retries) | %d |\n", len(f.failures))
	fmt.Fprintf(&b, "| Retries that waited for a key held by an attempt lost at the SIGKILL | %d |\n", f.held)
	fmt.Fprintf(&b, "| tools/list · tools/call | %d · %d |\n", w.lists.Load(), w.toolCalls.Load())
	fmt.Fprintf(&b, "| Destructive calls confirmed in the chat | %d |\n", w.confirmed.Load())
	fmt.Fprintf(&b, "| Confirmed calls interrupted by the SIGKILL (answered as such after the run limit) | %d |\n", w.interrupted.Load())
	fmt.Fprintf(&b, "| Destructive calls approved on the approval page (sign-in at the issuer) | %d |\n", w.approved.Load())
	w.mu.Lock()
	fmt.Fprintf(&b, "| swap_version answers by version | %v |\n", w.swap)
	w.mu.Unlock()
	fmt.Fprintf(&b, "| Files uploaded → executions launched | %d → %d |\n", w.uploads.Load(), ex.launched)
	fmt.Fprintf(&b, "| Executions succeeded · failed | %d · %d %v |\n", ex.succeeded, ex.failed, ex.failures)
	fmt.Fprintf(&b, "| Executions enqueued again: their job was fetched by the killed replica | %d |\n", ex.requeued)
	fmt.Fprintf(&b, "| File downloads through each replica directly | %d |\n", ex.downloads)
	fmt.Fprintf(&b, "| Execution events · signed deliveries received | %d · %d |\n", hooks[0], hooks[1])
	fmt.Fprintf(&b, "| Delivery jobs rescued after dying with the killed replica | %d |\n", hooks[2])
	fmt.Fprintf(&b, "| Rate-limited org (60/min) through 3 replicas: allowed · refused | %d · %d |\n", limit[0], limit[1])
	fmt.Fprintf(&b, "| Latency p50 · p99, all attempts | %s · %s |\n", f.p50, f.p99)
	fmt.Fprintf(&b, "| Latency p50 · p99, attempts during the faults (%d) | %s · %s |\n", f.faultAttempts, f.faultP50, f.faultP99)
	for _, w := range f.faults {
		fmt.Fprintf(&b, "| Fault: %s | %s |\n", w.name, w.end.Sub(w.start).Round(time.Millisecond))
	}
	return b.String()
}
