package app

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/tracing"
)

// otlpReceiver is an OTLP/HTTP traces endpoint on the loopback, as a
// collector serves it: it decodes each ExportTraceServiceRequest and keeps
// the spans.
type otlpReceiver struct {
	url string

	mu    sync.Mutex // guards spans
	spans []gotSpan
}

// gotSpan is one exported span, ids in hex.
type gotSpan struct {
	TraceID, SpanID, ParentID, Name string
	Kind                            tracepb.Span_SpanKind
	Attrs                           map[string]string
	Links                           []string // "<trace id>/<span id>"
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.Error(w, "want POST /v1/traces", http.StatusNotFound)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &export)
		}
		if err != nil {
			http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&export)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/v1/traces"
	return r
}

func (r *otlpReceiver) add(export *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range export.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				g := gotSpan{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: s.GetKind(),
					Attrs: map[string]string{},
				}
				for _, kv := range rs.GetResource().GetAttributes() {
					g.Attrs["resource."+kv.GetKey()] = anyValue(kv.GetValue())
				}
				for _, kv := range s.GetAttributes() {
					g.Attrs[kv.GetKey()] = anyValue(kv.GetValue())
				}
				for _, l := range s.GetLinks() {
					g.Links = append(g.Links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				r.spans = append(r.spans, g)
			}
		}
	}
}

// anyValue renders an attribute value as text.
func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return v.String()
}

// waitFor flushes srv's spans and waits, within a budget, until cond holds
// for the spans received so far; it returns them.
func (r *otlpReceiver) waitFor(t *testing.T, srv *testServer, what string, cond func([]gotSpan) bool) []gotSpan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := srv.app.tracing.ForceFlush(ctx)
		cancel()
		if err != nil {
			t.Fatalf("flushing spans to the receiver: %v", err)
		}
		r.mu.Lock()
		spans := slices.Clone(r.spans)
		r.mu.Unlock()
		if cond(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s the receiver has no %s; it got %d spans: %s", what, len(spans), spanNames(spans))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func spanNames(spans []gotSpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "\n  %s trace=%s span=%s parent=%s links=%v", s.Name, s.TraceID, s.SpanID, s.ParentID, s.Links)
	}
	return b.String()
}

func inTrace(spans []gotSpan, traceID string) []gotSpan {
	var out []gotSpan
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// startTracedProduct serves the first-party bundles with tracing exported
// to a receiver on the loopback.
func startTracedProduct(t *testing.T, trust bool, mutate func(*config.Config)) (*testServer, *otlpReceiver) {
	t.Helper()
	rcv := newOTLPReceiver(t)
	srv := serveApp(t, func(c *config.Config) {
		useFirstPartyBundles(t, c)
		c.Webhooks.AllowHosts = []string{"127.0.0.1"}
		plan := c.Plans[c.Orgs.DefaultPlan]
		plan.RequestsPerMinute = 1 << 20
		c.Plans[c.Orgs.DefaultPlan] = plan
		c.Tracing.Endpoint = rcv.url
		c.Tracing.TrustTraceparent = trust
		if mutate != nil {
			mutate(c)
		}
	}, Options{Version: "test", Tracing: tracing.Options{
		BatchTimeout: 20 * time.Millisecond,
		Getenv:       func(string) string { return "" }, // the machine's OTEL_* must not change the test
	}})
	return srv, rcv
}

// tracedCall sends one era-2026 tools/call with a traceparent header.
func tracedCall(t *testing.T, srv *testServer, token, traceparent, name string, args any) map[string]any {
	t.Helper()
	return tracedCallWith(t, srv, token, traceparent, name, args, `{}`, "")
}

// tracedCallWith is tracedCall declaring capabilities, with extra params
// (`"requestState":…,` say) before _meta.
func tracedCallWith(t *testing.T, srv *testServer, token, traceparent, name string, args any, capabilities, extra string) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,%s`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, name, raw, extra, capabilities)
	req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("traceparent", traceparent)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	var msg map[string]any
	if err := json.Unmarshal(out, &msg); err != nil || res.StatusCode != 200 {
		t.Fatalf("tools/call %s: HTTP %d %s", name, res.StatusCode, out)
	}
	result, _ := msg["result"].(map[string]any)
	if result == nil || result["isError"] == true {
		t.Fatalf("tools/call %s: %s", name, out)
	}
	return result
}

// A caller's trace context, as a W3C traceparent.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// tracedExecution runs an example task through REST and returns the id
// of its execution once it has finished.
func tracedExecution(t *testing.T, srv *testServer, token string) string {
	t.Helper()
	c := restClient{t: t, base: srv.baseURL, token: token}
	id, example := c.findTask("Resumo de extrato")
	body, _ := json.Marshal(map[string]any{"input": example})
	status, _, exe := c.do("POST", "/tasks/"+id+"/run", string(body))
	if status != 202 {
		t.Fatalf("run: %d %v", status, exe)
	}
	c.waitExecution(exe["id"].(string))
	return exe["id"].(string)
}

// TestTracingToolCallIsOneTrace sends one tools/call of kadu_executions_get
// over HTTP with a trusted traceparent and finds, in the caller's trace at
// a real OTLP/HTTP receiver, the spans of every layer it crossed, each the
// child of the one above, and the request's log line carrying the trace id.
func TestTracingToolCallIsOneTrace(t *testing.T) {
	srv, rcv := startTracedProduct(t, true, nil)
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_traced"})
	if err != nil {
		t.Fatal(err)
	}
	exe := tracedExecution(t, srv, token)

	tracedCall(t, srv, token, traceparent, "kadu_executions_get", map[string]any{"id": exe})

	want := []struct {
		what string
		is   func(gotSpan) bool
	}{
		{"the HTTP server span POST /mcp", func(s gotSpan) bool {
			return s.Name == "POST /mcp" && s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Attrs["http.route"] == "/mcp"
		}},
		{"the MCP method span", func(s gotSpan) bool {
			return s.Name == "mcp tools/call" && s.Attrs["gen_ai.tool.name"] == "kadu_executions_get"
		}},
		{"the bundle call with guest and host time", func(s gotSpan) bool {
			return s.Name == "bundle tools/call" && s.Attrs["kadu.bundle.name"] == "executions" &&
				s.Attrs["kadu.bundle.guest_ms"] != "" && s.Attrs["kadu.bundle.host_ms"] != "" && s.Attrs["kadu.bundle.api_calls"] == "1"
		}},
		{"the api() dispatch", func(s gotSpan) bool {
			return s.Name == "api GET /api/v1/executions/:id" && s.Attrs["http.response.status_code"] == "200"
		}},
		{"a store operation on executions", func(s gotSpan) bool {
			return s.Name == "select executions" && s.Attrs["db.system.name"] == "sqlite" && s.Kind == tracepb.Span_SPAN_KIND_CLIENT
		}},
	}
	spans := rcv.waitFor(t, srv, "trace with every layer's span", func(all []gotSpan) bool {
		trace := inTrace(all, callerTrace)
		for _, w := range want {
			if !slices.ContainsFunc(trace, w.is) {
				return false
			}
		}
		return true
	})
	trace := inTrace(spans, callerTrace)
	t.Logf("one tools/call of kadu_executions_get: %d spans:%s", len(trace), spanNames(trace))
	bundle := trace[slices.IndexFunc(trace, want[2].is)]
	t.Logf("bundle call: acquire %s ms, guest %s ms, host %s ms",
		bundle.Attrs["kadu.bundle.acquire_ms"], bundle.Attrs["kadu.bundle.guest_ms"], bundle.Attrs["kadu.bundle.host_ms"])
	byID := map[string]gotSpan{}
	for _, s := range trace {
		byID[s.SpanID] = s
	}
	// Each layer's span descends from the one above it.
	var above gotSpan
	for i, w := range want {
		s := trace[slices.IndexFunc(trace, w.is)]
		if i == 0 {
			if s.ParentID != callerSpan {
				t.Errorf("%s: parent %s, want the caller's span %s", w.what, s.ParentID, callerSpan)
			}
			if s.Attrs["resource.service.name"] != "kadu" || s.Attrs["resource.service.version"] != "test" {
				t.Errorf("resource: service.name %q version %q, want kadu test", s.Attrs["resource.service.name"], s.Attrs["resource.service.version"])
			}
		} else if !descends(byID, s, above.SpanID) {
			t.Errorf("%s (%s) does not descend from %s in the trace:%s", w.what, s.Name, above.Name, spanNames(trace))
		}
		above = s
	}
	for _, s := range trace {
		if strings.Contains(s.Name, exe) || strings.Contains(s.Name, "org_traced") {
			t.Errorf("span name %q carries an id", s.Name)
		}
	}
	if !strings.Contains(srv.logs.String(), `"trace_id":"`+callerTrace+`"`) {
		t.Errorf("no log line carries trace_id %s", callerTrace)
	}
}

// descends reports whether s has ancestor id within the trace.
func descends(byID map[string]gotSpan, s gotSpan, id string) bool {
	for range len(byID) {
		if s.ParentID == id {
			return true
		}
		p, ok := byID[s.ParentID]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

// TestTracingUntrustedTraceparentStartsANewTrace: without
// tracing.trust_traceparent, a caller cannot put Kadu's spans in a trace of
// its choosing; the request's trace only links to the caller's.
func TestTracingUntrustedTraceparentStartsANewTrace(t *testing.T) {
	srv, rcv := startTracedProduct(t, false, nil)
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_untrusted"})
	if err != nil {
		t.Fatal(err)
	}
	tracedCall(t, srv, token, traceparent, "kadu_tasks_list", map[string]any{})
	isServer := func(s gotSpan) bool {
		return s.Name == "POST /mcp" && slices.Contains(s.Links, callerTrace+"/"+callerSpan)
	}
	spans := rcv.waitFor(t, srv, "server span linked to the caller's trace", func(all []gotSpan) bool {
		return slices.ContainsFunc(all, isServer)
	})
	if got := inTrace(spans, callerTrace); len(got) > 0 {
		t.Fatalf("untrusted traceparent adopted: %d spans in the caller's trace:%s", len(got), spanNames(got))
	}
	server := spans[slices.IndexFunc(spans, isServer)]
	if server.ParentID != "" {
		t.Errorf("server span has parent %s, want a root", server.ParentID)
	}
	if !slices.ContainsFunc(spans, func(s gotSpan) bool { return s.TraceID == server.TraceID && s.Name == "mcp tools/call" }) {
		t.Errorf("the new trace %s lacks the MCP span:%s", server.TraceID, spanNames(spans))
	}
}

// TestTracingJobLinksToLaunchAndPropagates launches an execution with
// kadu_tasks_run in the caller's trace: the job that runs it is linked to
// that trace, and the webhook delivery of its end reaches the receiver with
// a traceparent of the delivery job's trace.
func TestTracingJobLinksToLaunchAndPropagates(t *testing.T) {
	srv, rcv := startTracedProduct(t, true, nil)
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_jobs_traced", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	c := restClient{t: t, base: srv.baseURL, token: token}
	hook := newHookReceiver(t)
	status, _, created := c.do("POST", "/webhooks", fmt.Sprintf(`{"url":%q,"event_codes":["execution.succeeded"]}`, hook.url))
	if status != 201 {
		t.Fatalf("POST /webhooks: %d %v", status, created)
	}
	task, example := c.findTask("Resumo de extrato")
	// Destructive: asked in the chat first, then run once the person accepts.
	args := map[string]any{"id": task, "input": example, "idempotency_key": "traced-run"}
	const caps = `{"elicitation":{}}`
	asked := tracedCallWith(t, srv, token, traceparent, "kadu_tasks_run", args, caps, "")
	state, _ := asked["requestState"].(string)
	if asked["resultType"] != "input_required" || state == "" {
		t.Fatalf("kadu_tasks_run: %v, want a confirmation asked in the chat", asked)
	}
	res := tracedCallWith(t, srv, token, traceparent, "kadu_tasks_run", args, caps,
		fmt.Sprintf(`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":%q,`, state))
	if text := fmt.Sprint(res["content"]); !strings.Contains(text, `"id":"exe_`) {
		t.Fatalf("kadu_tasks_run confirmed: %v, want the queued execution", res)
	}

	isRun := func(s gotSpan) bool {
		return s.Name == "job execute" && s.Kind == tracepb.Span_SPAN_KIND_CONSUMER &&
			slices.ContainsFunc(s.Links, func(l string) bool { return strings.HasPrefix(l, callerTrace+"/") })
	}
	spans := rcv.waitFor(t, srv, "execute job linked to the launching request", func(all []gotSpan) bool {
		return slices.ContainsFunc(all, isRun)
	})
	for _, step := range []string{"confirm ask", "confirm answer"} {
		if !slices.ContainsFunc(inTrace(spans, callerTrace), func(s gotSpan) bool {
			return s.Name == step && s.Attrs["gen_ai.tool.name"] == "kadu_tasks_run"
		}) {
			t.Errorf("no %q span in the caller's trace:%s", step, spanNames(inTrace(spans, callerTrace)))
		}
	}
	run := spans[slices.IndexFunc(spans, isRun)]
	if run.TraceID == callerTrace || run.ParentID != "" {
		t.Errorf("job span trace %s parent %q: want a trace of its own, linked", run.TraceID, run.ParentID)
	}
	if !slices.ContainsFunc(spans, func(s gotSpan) bool { return s.TraceID == run.TraceID && s.Attrs["db.system.name"] != "" }) {
		t.Errorf("no store operation in the job's trace %s:%s", run.TraceID, spanNames(spans))
	}

	got := hook.next(t)
	tp := got.header.Get("traceparent")
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 || parts[1] == callerTrace {
		t.Fatalf("delivery traceparent %q, want one of the delivery's own trace", tp)
	}
	rcv.waitFor(t, srv, "delivery job span of the traceparent the receiver got", func(all []gotSpan) bool {
		return slices.ContainsFunc(all, func(s gotSpan) bool {
			return s.Name == "job webhook_deliver" && s.TraceID == parts[1] && s.SpanID == parts[2]
		})
	})
}

// TestTracingHTTPRunnerGetsTraceparent launches an execution through REST
// in the caller's trace with runner: http: the agent service's request
// carries a traceparent of the run's job span, which links to the launch.
func TestTracingHTTPRunnerGetsTraceparent(t *testing.T) {
	got := make(chan string, 8)
	agentSvc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("traceparent"):
		default:
		}
		// Refused: the execution fails, which is all this test needs.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"refused by the test"}`)
	}))
	t.Cleanup(agentSvc.Close)
	srv, rcv := startTracedProduct(t, true, func(c *config.Config) {
		c.Runner.Kind = config.RunnerHTTP
		c.Runner.HTTP.URL = agentSvc.URL
		c.Runner.HTTP.Token = "agent-token-for-tests"
	})
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_runner_traced"})
	if err != nil {
		t.Fatal(err)
	}
	c := restClient{t: t, base: srv.baseURL, token: token}
	task, example := c.findTask("Resumo de extrato")
	body, _ := json.Marshal(map[string]any{"input": example})
	status, _, exe := c.do("POST", "/tasks/"+task+"/run", string(body), "traceparent", traceparent)
	if status != 202 {
		t.Fatalf("run: %d %v", status, exe)
	}
	var tp string
	select {
	case tp = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent service got no request in 30s")
	}
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("agent request traceparent %q, want a W3C traceparent", tp)
	}
	rcv.waitFor(t, srv, "execute job span that sent the agent request, linked to the REST launch", func(all []gotSpan) bool {
		return slices.ContainsFunc(all, func(s gotSpan) bool {
			return s.Name == "job execute" && s.TraceID == parts[1] &&
				slices.ContainsFunc(s.Links, func(l string) bool { return strings.HasPrefix(l, callerTrace+"/") })
		}) && slices.ContainsFunc(all, func(s gotSpan) bool {
			return s.TraceID == callerTrace && s.Name == "POST /api/v1/tasks/:id/run"
		})
	})
}
