package page

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/store"
)

// benchPage returns the page mounted on an echo without a listener, a
// signed-in session cookie for alice in org_acme, and the fake approvals.
func benchPage(b *testing.B) (*echo.Echo, *http.Cookie, *env) {
	b.Helper()
	env := newEnv(b, nil)
	e := echo.New()
	env.page.Register(e)
	c := &http.Cookie{Name: sessionCookie}
	c.Value, _ = env.page.seal.Seal(purposeSession, session{Issuer: env.issuer, Subject: "alice", OrgID: "org_acme",
		ID: "n", Exp: env.clock.Now().Add(time.Hour).Unix()})
	return e, c, env
}

// BenchmarkApprovalPage measures GET /approve/{id} for a signed-in person:
// open the session, read the approval, seal a form token, render.
func BenchmarkApprovalPage(b *testing.B) {
	e, ck, env := benchPage(b)
	a := env.pending("alice", "org_acme")
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/approve/"+a.ID, nil)
		req.Header.Set("Accept-Language", "pt-BR,pt;q=0.9,en;q=0.8")
		req.AddCookie(ck)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkDecision measures POST /approve/{id} with Cancel: origin and
// form-token checks, the requester check, Decide (in memory), the outcome
// page. Each iteration decides a fresh approval.
func BenchmarkDecision(b *testing.B) {
	e, ck, env := benchPage(b)
	sess := &session{ID: "n", Exp: env.clock.Now().Add(time.Hour).Unix()}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		a := env.pending("alice", "org_acme")
		token, _ := env.page.formFor(sess, a.ID)
		body := url.Values{"form": {token}, "decision": {"cancel"}}.Encode()
		b.StartTimer()
		req := httptest.NewRequest(http.MethodPost, "/approve/"+a.ID, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(ck)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || env.approvals.get(a.ID).Status != store.ApprovalCancelled {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

func BenchmarkNegotiate(b *testing.B) {
	for b.Loop() {
		negotiate("fr-FR,fr;q=0.9,pt-BR;q=0.8,pt;q=0.7,en-US;q=0.6,en;q=0.5")
	}
}
