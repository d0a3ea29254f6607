package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// protocolVersion is the MCP revision of every request: stateless, each
// request carries its version in a header and in _meta, no initialize.
const protocolVersion = "2026-07-28"

// A target is one server and the one request the load sends it, over and
// over.
type target struct {
	Name   string
	URL    string
	Header http.Header
	Body   []byte
	// Verify checks the first response in full (its decoded result);
	// later responses get the cheap check (ok).
	Verify func(res toolResult) error
}

// toolCall returns the headers and body of a stateless tools/call of tool
// with args. Every server gets exactly this; the peers ignore
// Authorization.
func toolCall(token, tool string, args any) (http.Header, []byte, error) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    protocolVersion,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "kadu-bench", "version": "1"},
		}},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the %s call: %w", tool, err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", protocolVersion)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", tool)
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h, body, nil
}

// toolResult is the part of a tools/call response the checks read.
type toolResult struct {
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeResponse decodes a JSON-RPC response, from a JSON body or from the
// first data: line of an event stream.
func decodeResponse(body []byte) (toolResult, error) {
	var res toolResult
	raw := bytes.TrimSpace(body)
	if !bytes.HasPrefix(raw, []byte("{")) {
		for line := range bytes.Lines(raw) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				raw = bytes.TrimSpace(d)
				break
			}
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("not a JSON-RPC response: %w: %s", err, abbrev(body))
	}
	switch {
	case res.Error != nil:
		return res, fmt.Errorf("JSON-RPC error %d %s", res.Error.Code, res.Error.Message)
	case res.Result == nil:
		return res, fmt.Errorf("no result: %s", abbrev(body))
	case res.Result.IsError:
		return res, fmt.Errorf("tool error (isError): %s", abbrev(body))
	}
	return res, nil
}

// ok is the check of every response under load, cheap so that the load
// generator leaves the cores to the server (the wrk script in
// docs/wrk-executions-get.lua checks the same): 200, a result, not a tool
// error. A JSON-RPC error carries no "result".
func ok(code uint16, body []byte) bool {
	return code == http.StatusOK && bytes.Contains(body, []byte(`"result"`)) &&
		!bytes.Contains(body, []byte(`"isError":true`))
}

// verify sends t's request once and checks the answer in full.
func verify(ctx context.Context, t target) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(t.Body))
	if err != nil {
		return err
	}
	req.Header = t.Header.Clone()
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: reading the response: %w", t.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", t.Name, resp.StatusCode, abbrev(body))
	}
	res, err := decodeResponse(body)
	if err == nil && !ok(uint16(resp.StatusCode), body) {
		err = fmt.Errorf("the load's check would count this response as failed: %s", abbrev(body))
	}
	if err == nil && t.Verify != nil {
		err = t.Verify(res)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	return nil
}

// A loadResult is one run against one target.
type loadResult struct {
	Requests     int
	Failed       int
	Elapsed      time.Duration // first request sent to last response read
	P50, P99     time.Duration // of every response, failed ones included
	FirstFailure string
}

// RPS is the successful responses per second.
func (r loadResult) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests-r.Failed) / r.Elapsed.Seconds()
}

// attack loads t as fast as it answers from conns workers, each with its
// own keep-alive connection and one request in flight (like hey -c or wrk
// -c), for d.
func attack(ctx context.Context, t target, conns int, d time.Duration) (loadResult, error) {
	a := vegeta.NewAttacker(
		vegeta.Workers(uint64(conns)), vegeta.MaxWorkers(uint64(conns)),
		vegeta.Connections(conns), vegeta.MaxConnections(conns),
		vegeta.KeepAlive(true), vegeta.HTTP2(false), vegeta.Timeout(10*time.Second),
		vegeta.Redirects(vegeta.NoFollow),
	)
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodPost, URL: t.URL, Header: t.Header, Body: t.Body})
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()

	var (
		res        loadResult
		lat        []time.Duration
		start, end time.Time
	)
	// Rate 0 is "as fast as the workers go"; vegeta then needs MaxWorkers.
	for r := range a.Attack(targeter, vegeta.Rate{Freq: 0}, d, t.Name) {
		res.Requests++
		lat = append(lat, r.Latency)
		if start.IsZero() || r.Timestamp.Before(start) {
			start = r.Timestamp
		}
		if e := r.Timestamp.Add(r.Latency); e.After(end) {
			end = e
		}
		if r.Error != "" || !ok(r.Code, r.Body) {
			res.Failed++
			if res.FirstFailure == "" {
				res.FirstFailure = describeFailure(r)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if res.Requests == 0 {
		return res, errors.New(t.Name + ": the load sent no request")
	}
	res.Elapsed = end.Sub(start)
	slices.Sort(lat)
	res.P50, res.P99 = quantile(lat, 0.50), quantile(lat, 0.99)
	return res, nil
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func describeFailure(r *vegeta.Result) string {
	if r.Error != "" {
		return r.Error
	}
	return fmt.Sprintf("status %d: %s", r.Code, abbrev(r.Body))
}

// abbrev shortens a body for an error message.
func abbrev(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// httpClient sends the single requests around the load (checks, the REST
// calls that prepare an execution, the admin endpoint): none may hang.
var httpClient = &http.Client{Timeout: 30 * time.Second}
