package api

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/storetest"
)

// BenchmarkWriteRoute measures PATCH /api/v1/tasks/{id} end to end over
// loopback HTTP: auth, role × scope, the body, one store write and — since
// the audit trail — its event appended in the same transaction
// (auditlog.go). Run it on a tree without the recording for the overhead
// (docs/audit.md#what-is-recorded).
func BenchmarkWriteRoute(b *testing.B) {
	for _, be := range storetest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			e := newEnv(b, be.Open(b, store.Options{MaxConns: 8}), nil)
			org := newOrg()
			tok := e.token(admin(org))
			task := e.createTask(tok, "t", nil)
			body := []byte(`{"description":"monthly report, edited"}`)
			client := e.srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequest("PATCH", e.srv.URL+BasePath+"/tasks/"+task, bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
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
}
