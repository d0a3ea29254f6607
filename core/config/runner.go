package config

import (
	"strings"
	"time"
)

// Runner kinds (runner.kind).
const (
	RunnerBuiltin = "builtin"
	RunnerHTTP    = "http"
)

var allowedRunners = []string{RunnerBuiltin, RunnerHTTP}

// Runner selects what runs executions (SPEC §7.6).
type Runner struct {
	// Kind is builtin (default: the deterministic playbook engine in the
	// process) or http (delegate each execution to an external agent
	// service, configured under HTTP).
	Kind string `koanf:"kind"`

	HTTP HTTPRunner `koanf:"http"`
}

// HTTPRunner configures the agent service used when runner.kind is http.
type HTTPRunner struct {
	// URL is the base URL of the agent service: https, or http only for a
	// loopback host; no user information, query or fragment. Default empty;
	// required when runner.kind is http.
	URL string `koanf:"url"`

	// Token is the bearer credential sent to the agent service
	// (Authorization: Bearer …). Default empty (none sent). Prints redacted.
	Token Secret `koanf:"token"`

	// Timeout bounds each request to the agent service. Default 30s.
	Timeout time.Duration `koanf:"timeout"`

	// PollInterval is how often the state of a running execution is asked of
	// the agent service. Default 1s.
	PollInterval time.Duration `koanf:"poll_interval"`
}

// runner checks runner.*. The URL of the agent service is checked whenever it
// is set; it is required only for the http runner.
func (p *problems) runner(r *Runner) {
	p.oneOf("runner.kind", r.Kind, allowedRunners)
	h := &r.HTTP
	switch {
	case h.URL != "":
		p.endpointURL("runner.http.url", h.URL)
	case r.Kind == RunnerHTTP:
		p.add("runner.http.url", "is required when runner.kind is http (want the https URL of the agent service)")
	}
	// The token itself is never shown.
	if strings.ContainsFunc(h.Token.Reveal(), func(r rune) bool { return r < '!' || r > '~' }) {
		p.add("runner.http.token", "contains spaces, control or non-ASCII characters, which cannot be sent in an "+
			"Authorization header (check for a trailing newline)")
	}
	p.positive("runner.http.timeout", h.Timeout)
	p.positive("runner.http.poll_interval", h.PollInterval)
}
