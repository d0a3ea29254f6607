// Package audit builds the records of the audit trail (docs/audit.md) from
// what a request carries: the principal the auth middleware proved, the
// surface and client it came through, its request and trace ids, and a
// digest of its arguments with secrets removed.
//
// It owns: the per-request audit context (Call) that the MCP endpoint and
// the REST middleware put in the request context, and NewRecord / ArgsDigest.
//
// It must not: write anything (core/store appends records, in the
// transaction of the change they record: store.WithAudit), verify tokens,
// or keep an argument's value — only its digest leaves this package.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/canonjson"
	"github.com/kobana/kadu/core/store"
)

// Call is what a request's surface knows about it, beyond the principal.
type Call struct {
	Surface    string // store.Surface…
	ClientName string // the client's reported name (MCP clientInfo.name), if known
	Tool       string // the MCP tool being called, if any
	RequestID  string // the request's id (X-Request-Id or the one Kadu assigned)
}

type callKey struct{}

// WithCall returns ctx carrying c. An inner surface keeps what an outer one
// set: a REST route dispatched in-process by a tool call stays an MCP call
// with that tool, so fields of c that are empty are taken from the outer
// Call.
func WithCall(ctx context.Context, c Call) context.Context {
	if outer, ok := CallFrom(ctx); ok {
		if outer.Surface != "" {
			c.Surface = outer.Surface
		}
		if c.ClientName == "" {
			c.ClientName = outer.ClientName
		}
		if c.Tool == "" {
			c.Tool = outer.Tool
		}
		if outer.RequestID != "" {
			c.RequestID = outer.RequestID
		}
	}
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the Call in ctx.
func CallFrom(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}

// NewRecord returns a record of action by p (nil: the system) with what ctx
// carries: the Call's surface, client name, tool and request id, and the
// trace id of the current span. The caller sets Route, ResourceID,
// ArgsDigest, Outcome, Status and Detail.
func NewRecord(ctx context.Context, p *auth.Principal, action string) store.AuditRecord {
	rec := store.AuditRecord{Action: action, Surface: store.SurfaceSystem}
	if c, ok := CallFrom(ctx); ok {
		if c.Surface != "" {
			rec.Surface = c.Surface
		}
		rec.ClientName, rec.Tool, rec.RequestID = c.ClientName, c.Tool, c.RequestID
	}
	if p != nil {
		rec.OrgID = p.OrgID
		rec.Issuer, rec.Subject, rec.Role = p.Issuer, p.Subject, string(p.Role)
		rec.Scopes = append([]string(nil), p.Scopes...)
		rec.ClientID = p.ClientID
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		rec.TraceID = sc.TraceID().String()
	}
	return rec
}

// secretFields are object members whose values are secrets wherever they
// appear in arguments: they are removed before the digest, so that the
// digest of a low-entropy secret cannot be brute-forced from the trail.
var secretFields = []string{"secret", "password", "token", "access_token", "refresh_token", "client_secret", "api_key"}

// ArgsDigest returns the RFC 8785 digest (hex sha256) of args with every
// member named like a secret (at any depth) removed, or "" for no
// arguments. Arguments that are not JSON digest as their raw bytes, so a
// record is never lost to a malformed body.
func ArgsDigest(args json.RawMessage) string {
	if len(args) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // canonjson applies the RFC 8785 number form
	var v any
	if err := dec.Decode(&v); err != nil {
		d, _ := canonjson.Digest(mustJSON(string(args)))
		return d
	}
	b, err := json.Marshal(redact(v))
	if err != nil {
		return ""
	}
	d, err := canonjson.Digest(b)
	if err != nil {
		return ""
	}
	return d
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if isSecret(k) {
				delete(t, k)
				continue
			}
			t[k] = redact(x)
		}
	case []any:
		for i, x := range t {
			t[i] = redact(x)
		}
	}
	return v
}

func isSecret(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretFields {
		if n == s || strings.HasSuffix(n, "_"+s) {
			return true
		}
	}
	return false
}
