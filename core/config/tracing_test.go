package config

import (
	"strings"
	"testing"
)

func TestValidateTracing(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Tracing)
		wantKey string // "" = valid
		wantMsg string
	}{
		{name: "off by default", mutate: func(c *Tracing) {}},
		{name: "collector URL", mutate: func(c *Tracing) { c.Endpoint = "http://127.0.0.1:4318/v1/traces" }},
		{name: "collector base URL", mutate: func(c *Tracing) { c.Endpoint = "https://otel.example.com" }},
		{name: "not a URL", mutate: func(c *Tracing) { c.Endpoint = "otel:4318" }, wantKey: "tracing.endpoint", wantMsg: "scheme"},
		{name: "query", mutate: func(c *Tracing) { c.Endpoint = "https://otel.example.com/v1/traces?x=1" }, wantKey: "tracing.endpoint", wantMsg: "query"},
		{name: "no sampling", mutate: func(c *Tracing) { c.SampleRatio = 0 }},
		{name: "ratio above 1", mutate: func(c *Tracing) { c.SampleRatio = 1.5 }, wantKey: "tracing.sample_ratio", wantMsg: "from 0"},
		{name: "negative ratio", mutate: func(c *Tracing) { c.SampleRatio = -0.1 }, wantKey: "tracing.sample_ratio"},
		{name: "empty service name", mutate: func(c *Tracing) { c.ServiceName = " " }, wantKey: "tracing.service_name", wantMsg: "set a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validBase()
			tt.mutate(&c.Tracing)
			err := c.Validate()
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			got := keyErrors(t, err)
			if len(got) != 1 || got[0].Key != tt.wantKey || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Validate() = %v, want one error for %s mentioning %q", err, tt.wantKey, tt.wantMsg)
			}
		})
	}
}

func TestLoadTracingFromEnv(t *testing.T) {
	path := writeYAML(t, "tracing:\n  sample_ratio: 0.5\n")
	t.Setenv("KADU_TRACING__ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("KADU_TRACING__TRUST_TRACEPARENT", "true")
	got, err := Load(path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Tracing{Endpoint: "http://127.0.0.1:4318", SampleRatio: 0.5, TrustTraceparent: true, ServiceName: "kadu"}
	if got.Tracing != want {
		t.Fatalf("tracing = %+v, want %+v", got.Tracing, want)
	}
	t.Setenv("KADU_TRACING__SAMPLE_RATIO", "half")
	if _, err := Load(path, true, nil); err == nil || !strings.Contains(err.Error(), "tracing.sample_ratio") {
		t.Fatalf("Load with sample_ratio=half: err = %v, want one naming tracing.sample_ratio", err)
	}
}
