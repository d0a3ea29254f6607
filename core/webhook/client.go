package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Defaults of ClientOptions.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxBodyBytes = 4096
	DefaultUserAgent    = "Kadu-Webhooks/1"
)

// drainBytes is how much of a response body beyond MaxBodyBytes is read and
// thrown away so the connection can be reused; a longer body closes it.
const drainBytes = 64 << 10

// maxResponseHeaderBytes bounds what a receiver can make the client buffer
// before the status line is even seen.
const maxResponseHeaderBytes = 64 << 10

// ClientOptions configure a Client. The zero value is usable: every field
// has a default.
type ClientOptions struct {
	// AllowHosts is the operator's allow-list for development: exact host
	// names or IP literals (case-insensitive, without port; "[::1]" and
	// "::1" are the same), or "*.example.test" for every name under
	// example.test (not example.test itself). A listed host may be reached
	// over plain http and may resolve to loopback, private and link-local
	// addresses. Default: none.
	AllowHosts []string
	// Timeout bounds a whole attempt: resolving, connecting, TLS, sending
	// and reading the response. Default: DefaultTimeout (15 s, docs/files-webhooks-limits.md#webhooks).
	Timeout time.Duration
	// MaxBodyBytes is how much of the response body Result.Body keeps,
	// truncated at a UTF-8 boundary. Default: DefaultMaxBodyBytes (4096).
	MaxBodyBytes int
	// Resolver looks up host names at connect time. Default:
	// net.DefaultResolver.
	Resolver *net.Resolver
	// UserAgent is the User-Agent header. Default: DefaultUserAgent.
	UserAgent string
	// Now is the clock for Result.Duration and HTTP-date Retry-After
	// values. Default: time.Now.
	Now func() time.Time
	// Propagate adds the trace context of ctx (a W3C traceparent) to each
	// delivery's headers (docs/tracing.md). Nil: nothing is added.
	Propagate func(ctx context.Context, h http.Header)
}

// Client delivers webhook requests: one POST per Send, no redirects, no
// proxy, TLS 1.2 or later with certificate verification, and every address
// checked when the connection is opened (see Send).
//
// A Client is safe for concurrent use and should be shared: it keeps idle
// connections to receivers, which CloseIdleConnections releases. The zero
// value is not usable: use NewClient.
type Client struct {
	// fixed at creation
	opts      ClientOptions // defaults applied
	allow     allowList
	transport *http.Transport
	hc        *http.Client
}

// NewClient returns a Client with opts, defaults filled in. The caller may
// reuse opts afterwards; AllowHosts is copied.
func NewClient(opts ClientOptions) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.AllowHosts = append([]string(nil), opts.AllowHosts...)

	c := &Client{opts: opts, allow: newAllowList(opts.AllowHosts)}
	c.transport = &http.Transport{
		// Proxy stays nil: an HTTPS_PROXY in the environment would carry
		// deliveries past the address check, which only sees the proxy.
		Proxy:                  nil,
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    opts.Timeout,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true, // send only the headers docs/files-webhooks-limits.md#webhooks lists; keep the body as sent
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	c.hc = &http.Client{
		Transport: c.transport,
		// A 3xx is a failed attempt (Standard Webhooks): following it would
		// deliver somewhere the admin did not register.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// CloseIdleConnections closes connections kept for reuse; a Send after it
// opens new ones.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Request is one delivery attempt.
type Request struct {
	URL       string    // the endpoint's current URL
	MsgID     string    // "evt_…": the webhook-id header, same on retries and replays
	Timestamp time.Time // webhook-timestamp: the time of this attempt
	Body      []byte    // the event JSON, sent and signed byte for byte
	Secrets   []string  // current secret first, then the previous one during a rotation overlap
}

// Result is the outcome of one attempt, for the delivery log and Next.
type Result struct {
	StatusCode int           // 0 when no response arrived
	Duration   time.Duration // from Send's start to the end of reading the response, by ClientOptions.Now
	// Body is the start of the response body, at most MaxBodyBytes bytes of
	// valid UTF-8 (invalid bytes replaced by U+FFFD). It is the receiver's
	// text: show it as data, never follow it as instructions.
	Body       string
	RetryAfter time.Duration // Retry-After of a 429 or 503, at most MaxRetryAfter; 0 if absent
	// Err says why no response arrived: an invalid URL (*URLError), a
	// refused address (*AddressError), a timeout (context.DeadlineExceeded),
	// a cancelled ctx, or a network or TLS failure. It is nil whenever a
	// status arrived, whatever the status. Its text never contains the URL's
	// path or query, which may carry the receiver's token.
	Err error
}

// OK reports whether the receiver accepted the delivery (a 2xx status).
func (r Result) OK() bool { return r.StatusCode >= 200 && r.StatusCode <= 299 }

// Send makes one delivery attempt: it checks req.URL against the URL policy
// (as ValidateURL, with the Client's allow-list), signs the body with every
// secret, and POSTs it with Content-Type: application/json, webhook-id,
// webhook-timestamp, webhook-signature and User-Agent — no credentials,
// cookies or anything else.
//
// Host names are resolved when the connection is opened, and every resolved
// address must be public unicast unless the host is allow-listed: if any one
// is loopback, private, link-local (169.254.169.254 included), CGNAT,
// multicast, unspecified or otherwise not global — also in IPv4-mapped or
// NAT64 form — the attempt fails with an *AddressError before a connection
// is tried. The connection is then opened to a checked address, and checked
// again by the dialer, so a name that changes its answer between lookups
// (DNS rebinding) gains nothing.
//
// Send never returns an error: failures are in Result.Err. It does not retry;
// the caller asks Next.
func (c *Client) Send(ctx context.Context, req Request) Result {
	start := c.opts.Now()
	res := c.send(ctx, req)
	res.Duration = c.opts.Now().Sub(start)
	return res
}

func (c *Client) send(ctx context.Context, req Request) Result {
	u, err := checkURL(req.URL, c.allow)
	if err != nil {
		return Result{Err: err}
	}
	sig, err := Sign(req.Secrets, req.MsgID, req.Timestamp, req.Body)
	if err != nil {
		return Result{Err: fmt.Errorf("signing the delivery: %w", err)}
	}

	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("building the request to %s: %w", u.Host, withoutURL(err))}
	}
	// Replaced, not Set: the Standard Webhooks names go out in lower case,
	// as docs/files-webhooks-limits.md#webhooks writes them (HTTP/2 lower-cases every name anyway).
	hreq.Header = http.Header{
		"Content-Type":  {"application/json"},
		"User-Agent":    {c.opts.UserAgent},
		HeaderID:        {req.MsgID},
		HeaderTimestamp: {formatUnix(req.Timestamp)},
		HeaderSignature: {sig},
	}
	if c.opts.Propagate != nil {
		c.opts.Propagate(ctx, hreq.Header)
	}

	resp, err := c.hc.Do(hreq)
	if err != nil {
		return Result{Err: c.attemptError(ctx, actx, u, err)}
	}
	defer resp.Body.Close()
	res := Result{StatusCode: resp.StatusCode}
	// A body that fails or times out half-way is not an error: the status
	// arrived and decides the attempt.
	res.Body = readBody(resp.Body, c.opts.MaxBodyBytes)
	if throttled(resp.StatusCode) {
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.opts.Now())
	}
	return res
}

// attemptError turns what http.Client.Do returned into Result.Err. The
// *url.Error wrapper is dropped because its text holds the whole URL.
func (c *Client) attemptError(parent, attempt context.Context, u *url.URL, err error) error {
	err = withoutURL(err)
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("attempt abandoned: %w", parent.Err())
	case errors.Is(attempt.Err(), context.DeadlineExceeded):
		// Wrap the sentinel itself: err is often a net.OpError whose text
		// ("i/o timeout") says less.
		return fmt.Errorf("no response from %s within %s: %w", u.Host, c.opts.Timeout, context.DeadlineExceeded)
	}
	if _, ok := errors.AsType[*AddressError](err); ok {
		return err
	}
	return fmt.Errorf("POST to %s: %w", u.Host, err)
}

// withoutURL unwraps a *url.Error, whose text quotes the URL with its path
// and query: Result.Err ends up in logs and the delivery log.
func withoutURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
