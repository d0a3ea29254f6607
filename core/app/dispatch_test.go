package app

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
)

// TestDispatchInProcess calls /api/v1 the way a bundle's api() does: as a
// principal, with no token, through the same handlers as the REST listener.
func TestDispatchInProcess(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			srv := startServerWith(t, true, func(c *config.Config) { useDriver(t, c, driver) })
			d := srv.app.dispatch
			ctx := t.Context()
			alice := &auth.Principal{Issuer: srv.cfg.IssuerURL(), Subject: "alice", OrgID: "org_a", Role: auth.RoleAdmin, Scopes: []string{auth.ScopeAdmin}}
			bob := &auth.Principal{Issuer: srv.cfg.IssuerURL(), Subject: "bob", OrgID: "org_b", Role: auth.RoleViewer, Scopes: []string{auth.ScopeRead}}

			status, body := d.Dispatch(ctx, alice, http.MethodPost, "/api/v1/tasks",
				[]byte(`{"name":"Dispatch","description":"d","instructions":"i","idempotency_key":"k1"}`))
			if status != http.StatusCreated {
				t.Fatalf("POST /tasks = %d %s", status, body)
			}
			var task struct{ ID string }
			if err := json.Unmarshal(body, &task); err != nil || task.ID == "" {
				t.Fatalf("task body %s", body)
			}
			// The same idempotency key replays, as over REST.
			if status, replay := d.Dispatch(ctx, alice, http.MethodPost, "/api/v1/tasks",
				[]byte(`{"name":"Dispatch","description":"d","instructions":"i","idempotency_key":"k1"}`)); status != http.StatusCreated || string(replay) != string(body) {
				t.Errorf("replay = %d %s", status, replay)
			}

			tests := []struct {
				name   string
				p      *auth.Principal
				method string
				path   string
				want   int
			}{
				{"own task", alice, http.MethodGet, "/api/v1/tasks/" + task.ID, http.StatusOK},
				{"list with query", alice, http.MethodGet, "/api/v1/tasks?limit=1&q=dispatch", http.StatusOK},
				{"another organisation's task", bob, http.MethodGet, "/api/v1/tasks/" + task.ID, http.StatusNotFound},
				{"viewer cannot create", bob, http.MethodPost, "/api/v1/tasks", http.StatusForbidden},
				{"outside the API", alice, http.MethodGet, "/mcp", http.StatusNotFound},
				{"unknown route", alice, http.MethodGet, "/api/v1/nothing", http.StatusNotFound},
				{"bad query", alice, http.MethodGet, "/api/v1/tasks?limit=1000", http.StatusUnprocessableEntity},
			}
			for _, tt := range tests {
				body := []byte(nil)
				if tt.method == http.MethodPost {
					body = []byte(`{"name":"x","description":"d","instructions":"i"}`)
				}
				if status, resp := d.Dispatch(ctx, tt.p, tt.method, tt.path, body); status != tt.want {
					t.Errorf("%s: %s %s = %d, want %d: %s", tt.name, tt.method, tt.path, status, tt.want, resp)
				}
			}
		})
	}
}
