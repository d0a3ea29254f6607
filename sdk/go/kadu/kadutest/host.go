// Package kadutest tests Kadu bundles written with package kadu, through a
// fake host that follows sdk/ABI.md: natively (the bundle registered in
// the test binary, called through the same code the wasm exports call), or
// as the built WebAssembly module under wazero.
//
// It owns: a fake host (API requests answered by an http.Handler, the
// caller, config, route grants, the api budget, the output cap, logs), a
// checker of manifests against sdk/ABI.md §10 with schemas compiled as
// draft 2020-12, and building a bundle with GOOS=wasip1.
//
// It must not: stand in for Kadu's real host (core/plugin), which also
// pools instances, seals state, applies access and runs the real API.
// What passes here can still be refused there; what fails here will be.
//
//	func TestGet(t *testing.T) {
//		mux := http.NewServeMux()
//		mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) { … })
//		b := kadutest.Native(t, &kadutest.Host{API: mux})
//		res := b.CallTool(t, "kadu_tasks_get", map[string]any{"id": "tsk_…"})
//		…
//	}
//
// It is a test helper: import it from _test.go files only. It does not
// build for GOOS=wasip1.
package kadutest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// Host is the fake host's configuration and what it recorded. Set the
// fields before the first invocation and do not change them after; the
// methods are safe for concurrent use.
type Host struct {
	// API answers the bundle's API requests, e.g. an http.ServeMux with
	// patterns such as "GET /api/v1/tasks/{id}". Nil: every request gets
	// 404 not_found.
	API http.Handler
	// Caller is what caller_info reports. Zero: DefaultCaller.
	Caller *kadu.Caller
	// Config holds the operator's config values for the bundle.
	Config map[string]string
	// Grant is the routes the operator granted. Nil: all the manifest's.
	Grant []string
	// APIBudget is the most api calls per invocation; 0: no limit.
	APIBudget int
	// OutputCap is the most bytes kadu_handle may write; 0: 1 MiB. The
	// manifest is always allowed 1 MiB.
	OutputCap int

	mu       sync.Mutex
	requests []Request
	logs     []LogEntry
}

// DefaultCaller is the caller when Host.Caller is nil: a member with read
// and run scopes.
var DefaultCaller = kadu.Caller{
	OrgID:     "org_test",
	UserID:    "user_test",
	Role:      kadu.RoleMember,
	Scopes:    []string{"kadu.read", "kadu.run"},
	RequestID: "req_test",
}

// Request is one API request the bundle made.
type Request struct {
	Method string
	Path   string // with the query, as the bundle sent it
	Body   []byte // nil when there was none
}

// LogEntry is one log message: from the log import, or a line the bundle
// wrote to stdout (level 1) or stderr (level 2).
type LogEntry struct {
	Level   int32 // 0 debug, 1 info, 2 warn, 3 error
	Message string
}

// Requests returns the API requests the bundle made, oldest first.
func (h *Host) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.requests)
}

// Logs returns what the bundle logged, oldest first.
func (h *Host) Logs() []LogEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.logs)
}

// Reset forgets the recorded requests and logs.
func (h *Host) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests, h.logs = nil, nil
}

func (h *Host) log(level int32, msg []byte) {
	const max = 4 << 10
	if len(msg) > max {
		msg = msg[:max]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, LogEntry{Level: level, Message: string(msg)})
}

func (h *Host) callerJSON() []byte {
	c := DefaultCaller
	if h.Caller != nil {
		c = *h.Caller
	}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("kadutest: encoding the caller: %v", err))
	}
	return b
}

// maxAPIBody is the API's body limit (sdk/ABI.md §11).
const maxAPIBody = 1 << 20

// serve performs one API request for a session: the host's refusals
// first, in the API's error shape, then the handler.
func (h *Host) serve(routes []string, calls int, method, path string, body []byte) (int, []byte) {
	h.mu.Lock()
	h.requests = append(h.requests, Request{Method: method, Path: path, Body: bytes.Clone(body)})
	h.mu.Unlock()
	switch {
	case !granted(routes, method, path):
		return refusal(http.StatusForbidden, "route_not_granted", "Route not granted",
			fmt.Sprintf("This bundle may not call %s %s.", method, strings.SplitN(path, "?", 2)[0]),
			"This tool cannot do that; tell the person which route is missing from the bundle's grant.")
	case h.APIBudget > 0 && calls > h.APIBudget:
		return refusal(http.StatusTooManyRequests, "api_budget_exhausted", "API budget exhausted",
			fmt.Sprintf("This call already made %d API requests, the most a bundle call may.", h.APIBudget),
			"Ask for less at once, e.g. a smaller page.")
	case len(body) > maxAPIBody:
		return refusal(http.StatusRequestEntityTooLarge, "payload_too_large", "Payload too large",
			"The body is over 1 MiB.", "Files travel through presigned URLs, never in a request body.")
	case h.API == nil:
		return refusal(http.StatusNotFound, "not_found", "Not found", "No such route.", "See the API reference for the routes.")
	}
	var rd io.Reader = http.NoBody
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://kadu.test"+path, rd)
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.API.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func refusal(status int, code, title, detail, hint string) (int, []byte) {
	b, _ := json.Marshal(map[string]any{
		"status":     status,
		"errors":     []map[string]any{{"code": code, "title": title, "detail": detail, "param": nil, "hint": hint}},
		"request_id": "req_test",
	})
	return status, b
}

// granted reports whether method and path (query ignored) match one of
// routes, "{name}" matching one non-empty segment.
func granted(routes []string, method, path string) bool {
	path, _, _ = strings.Cut(path, "?")
	for _, rt := range routes {
		m, pattern, _ := strings.Cut(rt, " ")
		if m == method && matchPath(pattern, path) {
			return true
		}
	}
	return false
}

func matchPath(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}

// allowedRoutes is the manifest's routes ∩ the grant.
func (h *Host) allowedRoutes(manifest []string) []string {
	if h.Grant == nil {
		return manifest
	}
	var out []string
	for _, r := range manifest {
		if slices.Contains(h.Grant, r) {
			out = append(out, r)
		}
	}
	return out
}
