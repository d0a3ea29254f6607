package app

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/auth"
)

// BenchmarkDispatchGet measures the in-process api() dispatch of a GET by
// id (GET /api/v1/tasks/{id} on SQLite): the request a route-mirroring
// tool's api() call makes, without the guest.
//
//	go test -run '^$' -bench DispatchGet -benchmem -cpu 1 ./core/app
func BenchmarkDispatchGet(b *testing.B) {
	srv := startServerWith(b, true, nil)
	d := srv.app.dispatch
	p := &auth.Principal{Issuer: srv.cfg.IssuerURL(), Subject: "alice", OrgID: "org_bench", Role: auth.RoleAdmin, Scopes: []string{auth.ScopeAdmin}}
	status, body := d.Dispatch(b.Context(), p, http.MethodPost, "/api/v1/tasks",
		[]byte(`{"name":"Bench","description":"d","instructions":"i"}`))
	if status != http.StatusCreated {
		b.Fatalf("POST /tasks = %d %s", status, body)
	}
	var task struct{ ID string }
	if err := json.Unmarshal(body, &task); err != nil {
		b.Fatal(err)
	}
	path := "/api/v1/tasks/" + task.ID
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if status, body := d.Dispatch(b.Context(), p, http.MethodGet, path, nil); status != http.StatusOK {
			b.Fatalf("GET %s = %d %s", path, status, body)
		}
	}
}
