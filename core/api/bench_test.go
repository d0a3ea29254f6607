package api

import (
	"io"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/storetest"
)

// BenchmarkGetExecution measures GET /api/v1/executions/{id} end to end
// over loopback HTTP: auth middleware, organisation lookup (cached), role ×
// scope, one store read, rendering.
func BenchmarkGetExecution(b *testing.B) {
	for _, be := range storetest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			e := newEnv(b, be.Open(b, store.Options{MaxConns: 8}), nil)
			org := newOrg()
			tok := e.token(viewer(org))
			task := e.createTask(e.token(owner(org)), "t", nil)
			x := e.executionIn(org, task, "owner-1", store.StatusSucceeded)
			req, err := http.NewRequest("GET", e.srv.URL+BasePath+"/executions/"+x.ID, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			client := e.srv.Client()
			get := func() {
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
			get()
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					get()
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						res, err := client.Do(req.Clone(req.Context()))
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
				})
			})
		})
	}
}

// BenchmarkListAuditEvents measures GET /api/v1/audit_events end to end
// over loopback HTTP on a chain of 2,000 events: the first page of 20
// unfiltered, and of 20 by a subject that one event in ten has.
func BenchmarkListAuditEvents(b *testing.B) {
	for _, be := range storetest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			db := be.Open(b, store.Options{MaxConns: 8})
			e := newEnv(b, db, nil)
			org := newOrg()
			tok := e.token(admin(org))
			for i := range 2000 {
				subject := "ana"
				if i%10 == 0 {
					subject = "bia"
				}
				if _, err := db.AppendAudit(b.Context(), store.AuditRecord{OrgID: org, Action: store.AuditRESTWrite,
					Surface: store.SurfaceREST, Subject: subject, Route: "POST /api/v1/tasks", Outcome: store.OutcomeSucceeded}); err != nil {
					b.Fatal(err)
				}
			}
			client := e.srv.Client()
			for _, q := range []struct{ name, query string }{{"all", ""}, {"subject", "?subject=bia"}} {
				b.Run(q.name, func(b *testing.B) {
					req, err := http.NewRequest("GET", e.srv.URL+BasePath+"/audit_events"+q.query, nil)
					if err != nil {
						b.Fatal(err)
					}
					req.Header.Set("Authorization", "Bearer "+tok)
					b.ReportAllocs()
					for b.Loop() {
						res, err := client.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode != http.StatusOK {
							b.Fatalf("status %d", res.StatusCode)
						}
					}
				})
			}
		})
	}
}
