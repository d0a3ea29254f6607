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
