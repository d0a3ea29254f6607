package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"time"
)

// response is a fully read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call describes one protocol request.
type call struct {
	method   string
	path     string // under the base URL, e.g. "/v1/runs"
	body     []byte // JSON, or nil
	idemKey  string // Idempotency-Key header, or ""
	maxBytes int64  // response body cap
	retries  int    // retries after the first attempt
}

// do sends c, retrying network errors, 429 and 5xx with exponential backoff
// and jitter (or the server's Retry-After, capped at MaxRetryDelay). It
// returns the first other response, whatever its status. When every attempt
// failed it returns an error wrapping ErrUnavailable; when ctx is done, one
// wrapping ctx.Err().
func (r *HTTPRunner) do(ctx context.Context, c call) (*response, error) {
	u := r.base.JoinPath(c.path).String()
	var last string
	for attempt := 0; ; attempt++ {
		resp, err := r.attempt(ctx, u, c)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%s %s: %w", c.method, c.path, ctx.Err())
		case err != nil:
			var tooBig *bodyTooLargeError
			if errors.As(err, &tooBig) {
				return nil, fmt.Errorf("%s %s: %w: %v", c.method, c.path, ErrProtocol, err)
			}
			last = err.Error()
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			last = fmt.Sprintf("HTTP %d", resp.status)
			wait = retryAfter(resp.header, r.opts.MaxRetryDelay)
		default:
			return resp, nil
		}
		if attempt >= c.retries {
			return nil, fmt.Errorf("%s %s: %w after %d attempts: %s", c.method, c.path, ErrUnavailable, attempt+1, last)
		}
		if wait < 0 {
			wait = backoff(attempt, r.opts.RetryBaseDelay, r.opts.MaxRetryDelay)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.method, c.path, err)
		}
	}
}

type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes", e.limit)
}

// attempt sends one request with the per-request timeout and reads the
// whole body, up to c.maxBytes.
func (r *HTTPRunner) attempt(ctx context.Context, u string, c call) (*response, error) {
	actx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(actx, c.method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("User-Agent", r.opts.UserAgent)
	req.Header.Set("Accept", "application/json")
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.idemKey != "" {
		req.Header.Set("Idempotency-Key", c.idemKey)
	}
	if r.opts.Propagate != nil {
		r.opts.Propagate(ctx, req.Header)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.maxBytes {
		return nil, &bodyTooLargeError{limit: c.maxBytes}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// retryAfter reads Retry-After (seconds or an HTTP date), capped at limit;
// -1 when absent or unreadable.
func retryAfter(h http.Header, limit time.Duration) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return -1
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	} else {
		return -1
	}
	return min(max(d, 0), limit)
}

// backoff returns the delay before retry attempt+1: base·2^attempt capped at
// limit, with half of it random ("equal jitter").
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt, 20)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isJSONResponse reports a JSON content type.
func isJSONResponse(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (mt == "application/json" || mt == "application/problem+json")
}
