package config

import "strings"

// Tracing configures OpenTelemetry traces (docs/tracing.md), exported over
// OTLP/HTTP. Off unless Endpoint, OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_SDK_DISABLED=true turns it
// off whatever is configured.
type Tracing struct {
	// Endpoint is the OTLP/HTTP traces URL of a collector, e.g.
	// "http://127.0.0.1:4318/v1/traces"; a URL without a path gets
	// "/v1/traces". Empty (default): off, unless the OTEL_EXPORTER_OTLP_*
	// endpoint variables are set.
	Endpoint string `koanf:"endpoint"`

	// SampleRatio is the share of new traces recorded, from 0 to 1; a span
	// whose parent was sampled (or not) follows it. Default 1.
	SampleRatio float64 `koanf:"sample_ratio"`

	// TrustTraceparent makes the W3C traceparent header of a request the
	// parent of Kadu's spans. Default false: each request starts a new trace,
	// linked to the caller's, so that a client cannot choose trace ids or
	// force sampling. Turn it on behind a proxy or gateway you control.
	TrustTraceparent bool `koanf:"trust_traceparent"`

	// ServiceName is the service.name of the spans. Default "kadu";
	// OTEL_SERVICE_NAME, when set, wins.
	ServiceName string `koanf:"service_name"`
}

func (p *problems) tracing(t *Tracing) {
	if t.Endpoint != "" {
		if u, ok := p.absURL("tracing.endpoint", t.Endpoint); ok && (u.RawQuery != "" || u.Fragment != "") {
			p.add("tracing.endpoint", "%q must not have a query or fragment (want the collector's OTLP/HTTP traces URL, "+
				"e.g. \"http://127.0.0.1:4318/v1/traces\")", RedactDSN(t.Endpoint))
		}
	}
	if t.SampleRatio < 0 || t.SampleRatio > 1 || t.SampleRatio != t.SampleRatio {
		p.add("tracing.sample_ratio", "%v is out of range: want a number from 0 (no new trace) to 1 (every trace)", t.SampleRatio)
	}
	if strings.TrimSpace(t.ServiceName) == "" {
		p.add("tracing.service_name", "is empty; set a name (default \"kadu\") or remove the key")
	}
}
