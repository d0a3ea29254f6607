package config

import (
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// hostnameRE is a DNS host name: dot-separated labels of letters, digits
// and inner hyphens.
var hostnameRE = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// Files configures where file contents live (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool).
type Files struct {
	// URL names the bucket. Empty (default): file://<data_dir>/blobs, a
	// local directory whose signed URLs the server itself serves. Otherwise
	// file:///absolute/dir, or s3://bucket?region=…[&endpoint=…] for any
	// S3-compatible store with native presigned URLs (credentials from the
	// AWS default chain: environment, shared files, instance role).
	URL string `koanf:"url"`
}

// blobsDir is the directory under data_dir of the default bucket.
const blobsDir = "blobs"

// FilesURL is the bucket to open: files.url, or file://<data_dir>/blobs.
func (c *Config) FilesURL() string {
	if c.Files.URL != "" {
		return c.Files.URL
	}
	return (&url.URL{Scheme: "file", Path: filepath.Join(c.DataDir, blobsDir)}).String()
}

func (p *problems) files(f *Files) {
	const key = "files.url"
	if f.URL == "" {
		return
	}
	u, err := url.Parse(f.URL)
	switch {
	case err != nil:
		p.add(key, "is not a URL (want file:///absolute/dir or s3://bucket?region=…)")
	case u.Scheme == "file":
		if u.Host != "" || !filepath.IsAbs(u.Path) {
			p.add(key, "%q: a file bucket needs an absolute directory, file:///var/lib/kadu/blobs", f.URL)
		}
	case u.Scheme == "s3":
		if u.Host == "" {
			p.add(key, "%q names no bucket (want s3://bucket?region=…)", f.URL)
		}
	default:
		p.add(key, "scheme %q is not supported (want file or s3)", u.Scheme)
	}
}

// Webhooks configures outbound webhook delivery (docs/files-webhooks-limits.md#webhooks).
type Webhooks struct {
	// AllowHosts are host names or IP literals (or "*.suffix" patterns)
	// webhook endpoints may use even though they resolve to loopback or
	// private addresses, and over plain http: for local development and
	// tests. Default empty: public https endpoints only.
	AllowHosts []string `koanf:"allow_hosts"`

	// Timeout bounds one delivery attempt. Default 15s.
	Timeout time.Duration `koanf:"timeout"`
}

func (p *problems) webhooks(w *Webhooks) {
	for i, h := range w.AllowHosts {
		name := strings.TrimPrefix(h, "*.")
		if net.ParseIP(name) != nil {
			continue
		}
		if name == "" || strings.ContainsAny(name, "/:@ ") || !hostnameRE.MatchString(name) {
			p.add("webhooks.allow_hosts", "entry %d, %q, is not a host name, an IP literal or a *.suffix pattern", i, h)
		}
	}
	p.positive("webhooks.timeout", w.Timeout)
}

// Rate-limit back-ends (rate_limits.backend).
const (
	RateLimitAuto     = "auto"
	RateLimitMemory   = "memory"
	RateLimitPostgres = "postgres"
)

var allowedRateLimitBackends = []string{RateLimitAuto, RateLimitMemory, RateLimitPostgres}

// RateLimits configures the limits of docs/reference/limits.md#rate-limits. Per-organisation limits come
// from the plans (requests_per_minute).
type RateLimits struct {
	// Enabled turns every limit on. Default true.
	Enabled bool `koanf:"enabled"`

	// IPPerMinute limits unauthenticated requests and failed
	// authentications per client IP (IPv6 per /64). Default 60.
	IPPerMinute int `koanf:"ip_per_minute"`

	// Backend is where counts live: auto (default: postgres when
	// store.driver is postgres, so the limit holds across replicas, else
	// memory), memory (per process) or postgres.
	Backend string `koanf:"backend"`
}

// RateLimitBackend resolves rate_limits.backend "auto".
func (c *Config) RateLimitBackend() string {
	if c.RateLimits.Backend != RateLimitAuto {
		return c.RateLimits.Backend
	}
	if c.Store.Driver == DriverPostgres {
		return RateLimitPostgres
	}
	return RateLimitMemory
}

func (p *problems) rateLimits(r *RateLimits, driver string) {
	p.oneOf("rate_limits.backend", r.Backend, allowedRateLimitBackends)
	if r.Backend == RateLimitPostgres && driver != DriverPostgres {
		p.add("rate_limits.backend", "is postgres but store.driver is %s; use auto or memory", driver)
	}
	if r.IPPerMinute <= 0 {
		p.add("rate_limits.ip_per_minute", "must be greater than 0 (got %d)", r.IPPerMinute)
	}
}
