package audit

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

func TestArgsDigest(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"member order", `{"a":1,"b":"x"}`, `{"b":"x","a":1}`},
		{"secret removed", `{"url":"https://h.example","secret":"s3cr3t"}`, `{"url":"https://h.example"}`},
		{"nested secret removed", `{"w":{"client_secret":"x","n":2}}`, `{"w":{"n":2}}`},
		{"numbers as RFC 8785 writes them", `{"n":1.0}`, `{"n":1}`},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := ArgsDigest(json.RawMessage(tc.a)), ArgsDigest(json.RawMessage(tc.b)); a != b || a == "" {
				t.Errorf("ArgsDigest(%s) = %q, ArgsDigest(%s) = %q; want the same non-empty digest", tc.a, a, tc.b, b)
			}
		})
	}
	if d := ArgsDigest(nil); d != "" {
		t.Errorf("ArgsDigest(nil) = %q, want empty", d)
	}
	if d := ArgsDigest(json.RawMessage(`not json`)); d == "" {
		t.Error("a malformed body has no digest; the record would lose it")
	}
}

func TestNewRecordTakesTheOuterSurface(t *testing.T) {
	ctx := WithCall(context.Background(), Call{Surface: store.SurfaceMCP, ClientName: "claude-ai", Tool: "kadu_tasks_delete", RequestID: "r1"})
	ctx = WithCall(ctx, Call{Surface: store.SurfaceREST, RequestID: "r2"}) // the in-process dispatch of the tool's route
	p := &auth.Principal{Issuer: "https://iss", Subject: "u1", OrgID: "org_1", Role: "admin", Scopes: []string{"kadu.write"}, ClientID: "c1"}
	rec := NewRecord(ctx, p, store.AuditRESTWrite)
	want := store.AuditRecord{OrgID: "org_1", Action: store.AuditRESTWrite, Surface: store.SurfaceMCP, Issuer: "https://iss",
		Subject: "u1", Role: "admin", ClientID: "c1", ClientName: "claude-ai", Tool: "kadu_tasks_delete", RequestID: "r1"}
	want.Scopes = []string{"kadu.write"}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("NewRecord = %+v\nwant %+v", rec, want)
	}
	if sys := NewRecord(context.Background(), nil, store.AuditConfigReloaded); sys.Surface != store.SurfaceSystem || sys.OrgID != store.InstallationChain {
		t.Errorf("a record without principal = %+v, want the system on the installation chain", sys)
	}
}
