package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEnabledRules(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		env      map[string]string
		want     bool
	}{
		{name: "nothing configured", want: false},
		{name: "endpoint", endpoint: "http://127.0.0.1:4318", want: true},
		{name: "OTEL_EXPORTER_OTLP_ENDPOINT", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: true},
		{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, want: true},
		{name: "OTEL_SDK_DISABLED wins", endpoint: "http://127.0.0.1:4318", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: false},
		{name: "OTEL_SDK_DISABLED=false", endpoint: "http://127.0.0.1:4318", env: map[string]string{"OTEL_SDK_DISABLED": "false"}, want: true},
		{name: "OTEL_TRACES_EXPORTER=none", endpoint: "http://127.0.0.1:4318", env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(context.Background(), Config{Endpoint: tt.endpoint, SampleRatio: 1}, Options{Getenv: env(tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			if tr.Enabled() != tt.want {
				t.Fatalf("Enabled() = %v, want %v", tr.Enabled(), tt.want)
			}
		})
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":             "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":            "http://127.0.0.1:4318/v1/traces",
		"https://otel.example.com/custom/x": "https://otel.example.com/custom/x",
	} {
		if got, err := tracesURL(in); err != nil || got != want {
			t.Errorf("tracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := tracesURL("127.0.0.1:4318"); err == nil || !strings.Contains(err.Error(), "tracing.endpoint") {
		t.Errorf("tracesURL without scheme: err = %v, want one naming tracing.endpoint", err)
	}
}

// recorded builds tracing that records into memory.
func recorded(t *testing.T, trust bool) (*Tracing, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr, err := New(context.Background(), Config{SampleRatio: 1, TrustTraceparent: trust}, Options{Exporter: exp, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

func TestMiddlewareTrust(t *testing.T) {
	for _, trust := range []bool{true, false} {
		tr, exp := recorded(t, trust)
		var logged bytes.Buffer
		log := slog.New(LogHandler(slog.NewJSONHandler(&logged, nil)))
		h := tr.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			SetRoute(r.Context(), r.Method, "/things/:id")
			log.InfoContext(r.Context(), "handled")
			w.WriteHeader(http.StatusTeapot)
		}))
		req := httptest.NewRequest(http.MethodGet, "/things/42", nil)
		req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
		h.ServeHTTP(httptest.NewRecorder(), req)
		if err := tr.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans := exp.GetSpans()
		if len(spans) != 1 {
			t.Fatalf("trust=%v: %d spans, want 1", trust, len(spans))
		}
		s := spans[0]
		if s.Name != "GET /things/:id" || s.SpanKind != trace.SpanKindServer {
			t.Errorf("trust=%v: span %q kind %v, want GET /things/:id server", trust, s.Name, s.SpanKind)
		}
		adopted := s.SpanContext.TraceID().String() == callerTrace && s.Parent.SpanID().String() == callerSpan
		if adopted != trust {
			t.Errorf("trust=%v: trace %s parent %s: caller's trace adopted = %v", trust, s.SpanContext.TraceID(), s.Parent.SpanID(), adopted)
		}
		if !trust && (len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != callerTrace) {
			t.Errorf("untrusted: links %v, want one to the caller's trace", s.Links)
		}
		var line map[string]any
		if err := json.Unmarshal(logged.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line["trace_id"] != s.SpanContext.TraceID().String() || line["span_id"] != s.SpanContext.SpanID().String() {
			t.Errorf("trust=%v: log line %v, want the span's trace_id and span_id", trust, line)
		}
	}
}

func TestStoreObserverOnlyInsideATrace(t *testing.T) {
	tr, exp := recorded(t, false)
	obs := tr.StoreObserver("sqlite")
	_, done := obs.Start(context.Background(), "select executions")
	done(nil) // outside a trace: the queue's polling, say
	ctx, parent := tr.Tracer().Start(context.Background(), "request")
	_, done = obs.Start(ctx, "insert webhook_deliveries")
	done(nil)
	parent.End()
	_ = tr.ForceFlush(context.Background())
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "insert webhook_deliveries,request" {
		t.Fatalf("spans %v, want only the statement inside the trace and its parent", names)
	}
	if Noop().StoreObserver("sqlite") != nil {
		t.Error("tracing off: StoreObserver is not nil, so the store would pay for it")
	}
}
