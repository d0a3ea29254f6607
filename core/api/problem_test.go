package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"
)

// TestErrorHandlerStorageUnavailable: an error that says the storage
// cannot take the request is a 503 unavailable with Retry-After, not
// a 500; anything else unknown stays a 500.
func TestErrorHandlerStorageUnavailable(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantRetry  string
	}{
		{name: "postgres disk_full", err: fmt.Errorf("creating task: %w", &pgconn.PgError{Code: "53100"}), wantStatus: 503, wantCode: "unavailable", wantRetry: "30"},
		{name: "postgres unreachable", err: fmt.Errorf("beginning transaction: %w", &pgconn.ConnectError{}), wantStatus: 503, wantCode: "unavailable", wantRetry: "30"},
		{name: "blob directory full", err: fmt.Errorf("writing: %w", syscall.ENOSPC), wantStatus: 503, wantCode: "unavailable", wantRetry: "30"},
		{name: "a bug", err: errors.New("boom"), wantStatus: 500, wantCode: "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := echo.New()
			rec := httptest.NewRecorder()
			c := e.NewContext(httptest.NewRequest(http.MethodPost, "/api/v1/tasks", nil), rec)
			ErrorHandler(slog.New(slog.DiscardHandler))(tt.err, c)
			var body struct {
				Errors []map[string]any `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors) != 1 {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if rec.Code != tt.wantStatus || body.Errors[0]["code"] != tt.wantCode || rec.Header().Get("Retry-After") != tt.wantRetry {
				t.Fatalf("%d %v Retry-After %q; want %d %s Retry-After %q", rec.Code, body.Errors[0]["code"],
					rec.Header().Get("Retry-After"), tt.wantStatus, tt.wantCode, tt.wantRetry)
			}
			if tt.wantStatus == 503 && body.Errors[0]["reason"] != "store_unavailable" {
				t.Fatalf("reason %v, want store_unavailable", body.Errors[0]["reason"])
			}
		})
	}
}
