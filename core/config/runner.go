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

// Runner selects what runs executions (docs/reference/rest.md#executions).
type Runner struct {
	// Kind is builtin (default: the deterministic playbook engine in the
	// process) or http (delegate each execution to an external agent
	// service, configured under HTTP).
	Kind string `koanf:"kind"`

	// RescueAfter is how long a running or cancelling execution may go
	// without its replica renewing its lease before any replica (or this
	// one, restarted) gives it up: running fails with replica_lost (cost
	// so far kept), cancelling ends cancelled. The lease is renewed every
	// quarter of it and lost runs are looked for as often. Default 1m;
	// from 1s to 1h.
	RescueAfter time.Duration `koanf:"rescue_after"`

	HTTP HTTPRunner `koanf:"http"`
}

// Bounds of runner.rescue_after: below a second renewals would load the
// store; above an hour a crash would hold an organisation's concurrency
// for too long.
const (
	minRescueAfter = time.Second
	maxRescueAfter = time.Hour
)

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
	if p.positive("runner.rescue_after", r.RescueAfter) && (r.RescueAfter < minRescueAfter || r.RescueAfter > maxRescueAfter) {
		p.add("runner.rescue_after", "%s is out of range; want from %s to %s (default 1m)", r.RescueAfter, minRescueAfter, maxRescueAfter)
	}
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
