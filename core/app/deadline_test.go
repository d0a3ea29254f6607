package app

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/config"
)

// TestRequestDeadline: a public request's work ends at http.write_timeout,
// so the idempotency lock derived from it outlives every request.
func TestRequestDeadline(t *testing.T) {
	e := echo.New()
	e.Use(requestDeadline(50 * time.Millisecond))
	e.GET("/slow", func(c echo.Context) error {
		select {
		case <-c.Request().Context().Done():
			return c.NoContent(http.StatusServiceUnavailable)
		case <-time.After(30 * time.Second):
			return c.NoContent(http.StatusOK)
		}
	})
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/slow", nil))
		done <- rec.Code
	}()
	select {
	case code := <-done:
		if code != http.StatusServiceUnavailable {
			t.Errorf("status %d, want the handler to see its context end (503)", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler ran on past the write timeout")
	}

	cfg := config.Defaults()
	if got, want := idempotencyLock(&cfg), cfg.HTTP.WriteTimeout+idempotencyMargin; got != want {
		t.Errorf("idempotency lock %s, want %s", got, want)
	}
}
