package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPOptions tune an HTTPRunner. Zero fields take their defaults.
type HTTPOptions struct {
	// Client sends the requests. Default: a new http.Client. Whatever is
	// given, redirects are never followed (the credential stays with the
	// configured host): the runner uses a copy with CheckRedirect replaced.
	Client *http.Client
	// RequestTimeout bounds each HTTP request. Default 15 s.
	RequestTimeout time.Duration
	// MaxRetries is how many times a request is retried after a network
	// error, a 429 or a 5xx. Default 4.
	MaxRetries int
	// RetryBaseDelay is the first retry delay, doubled at each retry. Default 250 ms.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps retry delays, Retry-After included. Default 10 s.
	MaxRetryDelay time.Duration
	// PollInterval is the first delay between polls of a run, growing by half
	// at each poll that shows no progress. Default 500 ms.
	PollInterval time.Duration
	// MaxPollInterval caps the poll delay. Default 5 s.
	MaxPollInterval time.Duration
	// CancelTimeout bounds forwarding a cancellation to the service after
	// ctx is done. Default 1 s.
	CancelTimeout time.Duration
	// MaxResponseBytes caps a run response. Default 4 MiB.
	MaxResponseBytes int64
	// MaxFileBytes caps an output file. Default 25 MiB.
	MaxFileBytes int64
	// AllowInsecureHTTP permits a plain http base URL on a host other than a
	// loopback address. Default false: the credential travels over TLS only.
	AllowInsecureHTTP bool
	// UserAgent is sent with every request. Default "kadu-http-runner/1".
	UserAgent string
	// Propagate adds the trace context of ctx (a W3C traceparent) to each
	// request's headers, so that the agent service's spans join the
	// execution's trace (docs/tracing.md). Nil: nothing is added.
	Propagate func(ctx context.Context, h http.Header)
}

// HTTPRunner delegates executions to an external agent service (runner:
// http) over the protocol in HTTP_RUNNER.md: it creates a run, polls it,
// relays its steps and cost to the Sink, fetches its output files, and
// forwards cancellation.
//
// It authenticates with the service's own bearer credential, never a user's
// token. An HTTPRunner is safe for concurrent use; it holds no
// per-execution state and nothing to close (idle connections belong to the
// http.Client). Create it with NewHTTPRunner.
type HTTPRunner struct {
	// fixed at creation
	base   *url.URL
	token  string
	client *http.Client
	opts   HTTPOptions
}

var _ Runner = (*HTTPRunner)(nil)

// NewHTTPRunner returns a runner for the agent service at baseURL (the
// protocol paths are appended to it), authenticating with token. baseURL
// must be https, or http on a loopback host unless opts.AllowInsecureHTTP.
func NewHTTPRunner(baseURL, token string, opts *HTTPOptions) (*HTTPRunner, error) {
	r := &HTTPRunner{token: token}
	if opts != nil {
		r.opts = *opts
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("agent service URL %q: want an absolute http(s) URL without credentials, query or fragment", baseURL)
	}
	if u.Scheme == "http" && !r.opts.AllowInsecureHTTP && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("agent service URL %q: plain http only to a loopback host (or set AllowInsecureHTTP)", baseURL)
	}
	r.base = u
	if token == "" || strings.ContainsFunc(token, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return nil, errors.New("agent service token: want a non-empty token without spaces or control characters")
	}
	o := &r.opts
	setDefault(&o.RequestTimeout, 15*time.Second)
	setDefault(&o.RetryBaseDelay, 250*time.Millisecond)
	setDefault(&o.MaxRetryDelay, 10*time.Second)
	setDefault(&o.PollInterval, 500*time.Millisecond)
	setDefault(&o.MaxPollInterval, 5*time.Second)
	setDefault(&o.CancelTimeout, time.Second)
	setDefault(&o.MaxResponseBytes, 4<<20)
	setDefault(&o.MaxFileBytes, 25<<20)
	if o.MaxRetries <= 0 {
		o.MaxRetries = 4
	}
	if o.UserAgent == "" {
		o.UserAgent = "kadu-http-runner/1"
	}
	client := &http.Client{}
	if o.Client != nil {
		c := *o.Client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r.client = client
	return r, nil
}

func setDefault[T time.Duration | int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpState is Outcome.State of the HTTP runner: the service's state plus
// what the runner needs to continue the execution.
type httpState struct {
	V            int             `json:"v"`
	ServiceState json.RawMessage `json:"service_state,omitempty"`
	PausedStep   string          `json:"paused_step"`
	CostCents    int64           `json:"cost_cents"` // every run before this one
	FileIDs      []string        `json:"file_ids,omitempty"`
}

// httpRun is one Run of the HTTP runner: not shared, dropped when Run returns.
type httpRun struct {
	r       *HTTPRunner
	job     *Job
	sink    Sink
	prior   httpState
	runID   string
	charged int64           // cost of this run already passed to Charge
	steps   map[string]Step // last reported version of each step
	last    *wireRun        // the latest valid answer
}

// Run implements Runner. It creates a run on the service, polls it until
// it leaves queued/running, and reports the service's steps, cost, output
// and files. When ctx is done it asks the service to cancel the run (waiting
// at most CancelTimeout) and returns ctx.Err(). An answer outside the
// protocol is an error wrapping ErrProtocol (the run is cancelled on the
// service, best effort); a service unreachable through every retry, one
// wrapping ErrUnavailable.
func (r *HTTPRunner) Run(ctx context.Context, job *Job, sink Sink) (*Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := &httpRun{r: r, job: job, sink: sink, steps: map[string]Step{}}
	if len(job.State) > 0 {
		if err := json.Unmarshal(job.State, &h.prior); err != nil || h.prior.V != 1 {
			return nil, fmt.Errorf("%w: unreadable state", ErrBadResume)
		}
	}
	switch {
	case job.Resume != nil && len(job.State) == 0:
		return nil, fmt.Errorf("%w: Job.Resume without Job.State", ErrBadResume)
	case job.Resume != nil && job.Resume.StepID != h.prior.PausedStep:
		return nil, fmt.Errorf("%w: answer for step %q, but step %q is waiting", ErrBadResume, job.Resume.StepID, h.prior.PausedStep)
	}
	if limit := job.MaxCostCents; limit > 0 && h.prior.CostCents >= limit {
		return h.capOutcome(fmt.Sprintf("the execution already cost %d of its max %d centavos", h.prior.CostCents, limit)), nil
	}

	run, out, err := h.create(ctx)
	if err != nil || out != nil {
		return out, err
	}
	delay := r.opts.PollInterval
	for {
		progressed, out, err := h.observe(ctx, run)
		if err != nil || out != nil {
			return out, err
		}
		if run.done() {
			return h.finish(ctx, run)
		}
		if progressed {
			delay = r.opts.PollInterval
		} else {
			delay = min(delay+delay/2, r.opts.MaxPollInterval)
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, h.abandon(ctx, err)
		}
		if run, err = h.get(ctx); err != nil {
			return nil, h.abandon(ctx, err)
		}
	}
}

// create posts the run. A 422 with a failure body is the service refusing
// the execution: it becomes a failed Outcome.
func (h *httpRun) create(ctx context.Context) (*wireRun, *Outcome, error) {
	req, err := h.createRequest(ctx)
	if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the run request: %w", err)
	}
	resp, err := h.r.do(ctx, call{method: http.MethodPost, path: "/v1/runs", body: body, idemKey: idempotencyKey(h.job),
		maxBytes: h.r.opts.MaxResponseBytes, retries: h.r.opts.MaxRetries})
	if err != nil {
		return nil, nil, err
	}
	if resp.status == http.StatusUnprocessableEntity {
		var rej wireRejection
		if !isJSONResponse(resp.header) || decodeStrict(resp.body, &rej) != nil || !validFailureCode(rej.Failure.Code) ||
			checkText("failure.message", rej.Failure.Message, maxWireText, false) != nil {
			return nil, nil, fmt.Errorf("POST /v1/runs: %w: 422 without a valid failure body", ErrProtocol)
		}
		return nil, &Outcome{Status: StatusFailed, Output: h.output(nil), CostCents: h.prior.CostCents,
			Failure: &Failure{Code: rej.Failure.Code, Message: rej.Failure.Message}}, nil
	}
	if resp.status != http.StatusCreated && resp.status != http.StatusOK {
		return nil, nil, fmt.Errorf("POST /v1/runs: %w: unexpected HTTP %d", ErrProtocol, resp.status)
	}
	run, err := h.decodeRun(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("POST /v1/runs: %w", err)
	}
	h.runID = run.RunID
	return run, nil, nil
}

func (h *httpRun) createRequest(ctx context.Context) (*wireCreateRun, error) {
	job := h.job
	req := &wireCreateRun{
		ExecutionID: job.ExecutionID, TaskID: job.TaskID, OrgID: job.OrgID, Instructions: job.Instructions,
		Playbook: orNull(job.Playbook), Input: job.Input, Files: []wireInputFile{}, State: orNull(h.prior.ServiceState),
	}
	if len(req.Input) == 0 {
		req.Input = json.RawMessage("{}")
	}
	if job.MaxCostCents > 0 {
		left := job.MaxCostCents - h.prior.CostCents
		req.MaxCostCents = &left
	}
	if job.Resume != nil {
		req.Resume = &wireResume{StepID: job.Resume.StepID, Answer: orNull(job.Resume.Answer)}
	}
	for _, f := range job.Files {
		if f.DownloadURL == nil {
			return nil, fmt.Errorf("input file %s: no DownloadURL function", f.ID)
		}
		u, err := f.DownloadURL(ctx)
		if err != nil {
			return nil, fmt.Errorf("download URL of input file %s: %w", f.ID, err)
		}
		req.Files = append(req.Files, wireInputFile{ID: f.ID, Filename: f.Filename, ContentType: f.ContentType, SizeBytes: f.Size, DownloadURL: u})
	}
	return req, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// idempotencyKey is the same for every attempt at the same segment of an
// execution (same resume answer and state), so a retried create, or a
// worker that crashed and runs the job again, finds the existing run.
func idempotencyKey(job *Job) string {
	h := sha256.New()
	h.Write([]byte(job.ExecutionID))
	h.Write([]byte{0})
	if job.Resume != nil {
		h.Write([]byte(job.Resume.StepID))
		h.Write([]byte{0})
		h.Write(job.Resume.Answer)
	}
	h.Write([]byte{0})
	h.Write(job.State)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (h *httpRun) get(ctx context.Context) (*wireRun, error) {
	path := "/v1/runs/" + h.runID
	resp, err := h.r.do(ctx, call{method: http.MethodGet, path: path, maxBytes: h.r.opts.MaxResponseBytes, retries: h.r.opts.MaxRetries})
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %w: unexpected HTTP %d", path, ErrProtocol, resp.status)
	}
	run, err := h.decodeRun(resp)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if run.RunID != h.runID {
		return nil, fmt.Errorf("GET %s: %w: answered for run %q", path, ErrProtocol, run.RunID)
	}
	return run, nil
}

func (h *httpRun) decodeRun(resp *response) (*wireRun, error) {
	if !isJSONResponse(resp.header) {
		return nil, fmt.Errorf("%w: content type %q, want application/json", ErrProtocol, resp.header.Get("Content-Type"))
	}
	var run wireRun
	if err := decodeStrict(resp.body, &run); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if err := run.validate(h.r.opts.MaxFileBytes); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if h.last != nil && run.CostCents < h.last.CostCents {
		return nil, fmt.Errorf("%w: cost_cents went down from %d to %d", ErrProtocol, h.last.CostCents, run.CostCents)
	}
	return &run, nil
}

// observe relays a run's new or changed steps and its new cost. It returns
// progressed when anything changed, and an Outcome when a cost cap stops the
// run.
func (h *httpRun) observe(ctx context.Context, run *wireRun) (progressed bool, out *Outcome, err error) {
	h.last = run
	now := time.Now()
	for _, ws := range run.Steps {
		s := Step{ID: ws.ID, Type: ws.Type, Title: ws.Title, Status: StepStatus(ws.Status), Summary: ws.Summary,
			CostCents: ws.CostCents, StartedAt: ws.StartedAt, FinishedAt: ws.FinishedAt}
		prev, seen := h.steps[s.ID]
		if s.StartedAt.IsZero() {
			s.StartedAt = now
			if seen {
				s.StartedAt = prev.StartedAt
			}
		}
		if seen && sameStep(prev, s) {
			continue
		}
		if err := h.sink.RecordStep(ctx, s); err != nil {
			return false, nil, h.abandon(ctx, fmt.Errorf("recording step %q: %w", s.ID, err))
		}
		h.steps[s.ID] = s
		progressed = true
	}
	if delta := run.CostCents - h.charged; delta > 0 {
		progressed = true
		h.charged = run.CostCents
		err := h.sink.Charge(ctx, delta)
		total := h.prior.CostCents + h.charged
		switch {
		case errors.Is(err, ErrCostCap):
			return false, h.stopForCap(ctx, run, err.Error()), nil
		case err != nil:
			return false, nil, h.abandon(ctx, fmt.Errorf("charging %d centavos: %w", delta, err))
		case h.job.MaxCostCents > 0 && total > h.job.MaxCostCents:
			return false, h.stopForCap(ctx, run, fmt.Sprintf("the execution cost %d centavos, above its max of %d", total, h.job.MaxCostCents)), nil
		}
	}
	return progressed, nil, nil
}

// sameStep compares steps, times by instant (decoded zones differ in
// pointer identity).
func sameStep(a, b Step) bool {
	return a.ID == b.ID && a.Type == b.Type && a.Title == b.Title && a.Status == b.Status && a.Summary == b.Summary &&
		a.CostCents == b.CostCents && a.StartedAt.Equal(b.StartedAt) && a.FinishedAt.Equal(b.FinishedAt)
}

// stopForCap cancels a run that crossed a cost cap and reports the failure
// with the output the service had produced so far (files excluded).
func (h *httpRun) stopForCap(ctx context.Context, run *wireRun, msg string) *Outcome {
	if !run.done() {
		h.cancelRemote(ctx)
	}
	out := h.capOutcome(msg)
	out.Output = h.output(run.Output)
	return out
}

func (h *httpRun) capOutcome(msg string) *Outcome {
	return &Outcome{Status: StatusFailed, Output: h.output(nil), CostCents: h.prior.CostCents + h.charged,
		Failure: &Failure{Code: FailureCostCap, Message: msg}}
}

// finish turns a run that left queued/running into the Outcome, after
// storing its output files.
func (h *httpRun) finish(ctx context.Context, run *wireRun) (*Outcome, error) {
	fileIDs := append([]string(nil), h.prior.FileIDs...)
	if run.Output != nil {
		for _, f := range run.Output.Files {
			id, err := h.fetchFile(ctx, f)
			if err != nil {
				return nil, err
			}
			fileIDs = append(fileIDs, id)
		}
	}
	out := &Outcome{Output: h.output(run.Output), CostCents: h.prior.CostCents + h.charged}
	out.Output.FileIDs = nonNil(fileIDs)
	switch run.Status {
	case wireSucceeded:
		out.Status = StatusSucceeded
	case wireFailed:
		out.Status = StatusFailed
		out.Failure = &Failure{Code: run.Failure.Code, Message: run.Failure.Message}
	case wireCancelled:
		out.Status = StatusFailed
		out.Failure = &Failure{Code: FailureError, Message: "the agent service cancelled the run"}
	case wireWaitingInput:
		p := run.PendingInput
		out.Status = StatusWaitingInput
		out.Pending = &PendingInput{Kind: PendingKind(p.Kind), Prompt: p.Prompt, InputSchema: p.InputSchema, StepID: p.StepID}
		state, err := json.Marshal(httpState{V: 1, ServiceState: run.State, PausedStep: p.StepID, CostCents: out.CostCents, FileIDs: fileIDs})
		if err != nil {
			return nil, fmt.Errorf("encoding state: %w", err)
		}
		out.State = state
	}
	return out, nil
}

func (h *httpRun) output(o *wireOutput) Output {
	out := Output{FileIDs: nonNil(append([]string(nil), h.prior.FileIDs...))}
	if o != nil {
		out.Summary = o.Summary
		if len(o.Data) > 0 && string(o.Data) != "null" {
			out.Data = o.Data
		}
	}
	return out
}

// fetchFile downloads one output file of the run and stores it.
func (h *httpRun) fetchFile(ctx context.Context, f wireOutputFiles) (string, error) {
	path := "/v1/runs/" + h.runID + "/files/" + f.ID
	resp, err := h.r.do(ctx, call{method: http.MethodGet, path: path, maxBytes: h.r.opts.MaxFileBytes, retries: h.r.opts.MaxRetries})
	if err != nil {
		return "", err
	}
	if resp.status != http.StatusOK {
		return "", fmt.Errorf("GET %s: %w: unexpected HTTP %d", path, ErrProtocol, resp.status)
	}
	if int64(len(resp.body)) != f.SizeBytes {
		return "", fmt.Errorf("GET %s: %w: %d bytes, the run said %d", path, ErrProtocol, len(resp.body), f.SizeBytes)
	}
	id, err := h.sink.WriteFile(ctx, f.Filename, f.ContentType, resp.body)
	if err != nil {
		return "", fmt.Errorf("storing output file %s: %w", f.Filename, err)
	}
	return id, nil
}

// abandon cancels the run on the service (best effort) and returns err.
// When ctx is done, the steps still running are recorded as cancelled.
func (h *httpRun) abandon(ctx context.Context, err error) error {
	if h.runID != "" {
		h.cancelRemote(ctx)
	}
	if ctx.Err() != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		now := time.Now()
		for _, id := range sortedKeys(h.steps) {
			if s := h.steps[id]; s.Status == StepRunning || s.Status == StepWaitingInput {
				s.Status, s.FinishedAt = StepCancelled, now
				_ = h.sink.RecordStep(rctx, s) // best effort: the execution is being cancelled anyway
			}
		}
	}
	return err
}

// cancelRemote asks the service to cancel the run, on a context that
// survives ctx for at most CancelTimeout. Failures are ignored: the service
// also stops runs whose execution it never hears about again.
func (h *httpRun) cancelRemote(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.r.opts.CancelTimeout)
	defer cancel()
	_, _ = h.r.do(cctx, call{method: http.MethodPost, path: "/v1/runs/" + h.runID + "/cancel", body: []byte("{}"),
		maxBytes: 64 << 10, retries: 1})
}
