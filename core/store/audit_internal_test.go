package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/kobana/kadu/core/canonjson"
)

// referenceCanonical is the definition canonicalAuditEvent implements: the
// event's members as a JSON object, through canonjson.Transform (RFC 8785).
func referenceCanonical(t testing.TB, e AuditEvent) []byte {
	t.Helper()
	scopes := e.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	raw, err := json.Marshal(map[string]any{
		"id": e.ID, "org_id": e.OrgID, "seq": e.Seq, "occurred_at": e.OccurredAt.UTC().Format(auditTimeFormat),
		"action": e.Action, "surface": e.Surface, "issuer": e.Issuer, "subject": e.Subject, "role": e.Role,
		"scopes": scopes, "client_id": e.ClientID, "client_name": e.ClientName, "tool": e.Tool, "route": e.Route,
		"resource_id": e.ResourceID, "args_digest": e.ArgsDigest, "outcome": e.Outcome, "status": e.Status,
		"detail": e.Detail, "request_id": e.RequestID, "trace_id": e.TraceID,
	})
	if err != nil {
		t.Fatal(err)
	}
	canon, err := canonjson.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	return canon
}

// FuzzCanonicalAuditEvent holds the hashed form equal to RFC 8785 for any
// text a caller may record (control characters, quotes, invalid UTF-8,
// characters beyond the BMP).
func FuzzCanonicalAuditEvent(f *testing.F) {
	f.Add("org_1", "rest.write", "user \"1\"\n", "tab\there", "kadu.admin", int64(1), 201, int64(1_700_000_000_123_456))
	f.Add("", "bundle.loaded", "", "\x00\x1f\u2028\U0001F600<>&", "", int64(9_007_199_254_740_991), -1, int64(0))
	f.Add("org", "a", "\xff\xfe", `\u0041`, "a,b", int64(0), 0, int64(-62135596800000000))
	f.Fuzz(func(t *testing.T, org, action, subject, detail, scope string, seq int64, status int, micros int64) {
		if seq < -(1<<53) || seq > 1<<53 || status < -(1<<31) || status > 1<<31 {
			t.Skip("integers beyond what an IEEE double holds exactly are not JSON numbers RFC 8785 keeps")
		}
		e := AuditEvent{AuditRecord: AuditRecord{OrgID: org, Action: action, Subject: subject, Detail: detail,
			Scopes: []string{scope, detail}, Status: status, OccurredAt: time.UnixMicro(micros)}, ID: "aud_x", Seq: seq}
		if got, want := canonicalAuditEvent(e), referenceCanonical(t, e); !bytes.Equal(got, want) {
			t.Fatalf("canonical form\n got %s\nwant %s", got, want)
		}
	})
}

// TestCanonicalAuditEventEmpty covers an event without scopes: [] in the
// hash whether the slice is nil or empty.
func TestCanonicalAuditEventEmpty(t *testing.T) {
	for _, scopes := range [][]string{nil, {}} {
		e := AuditEvent{ID: "aud_x", Seq: 1, AuditRecord: AuditRecord{Scopes: scopes}}
		if got, want := canonicalAuditEvent(e), referenceCanonical(t, e); !bytes.Equal(got, want) {
			t.Errorf("scopes %#v: got %s, want %s", scopes, got, want)
		}
	}
}

func BenchmarkAuditHash(b *testing.B) {
	e := AuditEvent{AuditRecord: AuditRecord{OrgID: "org_1", Action: AuditRESTWrite, Surface: SurfaceREST,
		Issuer: "https://issuer.test", Subject: "user-1", Scopes: []string{"kadu.admin"}, Route: "POST /api/v1/tasks",
		Outcome: OutcomeSucceeded, Status: 201, OccurredAt: time.Now()}, ID: NewID(PrefixAudit), Seq: 42}
	for b.Loop() {
		auditHash(e)
	}
}
