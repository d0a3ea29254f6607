package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// noQueue stands in for core/jobs: it accepts every job and runs none.
type noQueue struct{}

func (noQueue) EnqueueExecution(context.Context, *store.Tx, string, string) error { return nil }
func (noQueue) EnqueueResume(context.Context, *store.Tx, string, string, api.Resume) error {
	return nil
}
func (noQueue) CancelRunning(context.Context, string, string) error                    { return nil }
func (noQueue) Emit(context.Context, *store.Tx, string, string, json.RawMessage) error { return nil }
func (noQueue) EnqueueReplay(context.Context, *store.Tx, string, string) error         { return nil }

// oneToken accepts the token "dev" for an owner of org_demo.
type oneToken struct{}

func (oneToken) Verify(_ context.Context, raw string) (*auth.Principal, error) {
	if raw != "dev" {
		return nil, auth.ErrInvalidToken
	}
	return &auth.Principal{OrgID: "org_demo", Subject: "ana", Role: auth.RoleOwner, Scopes: []string{auth.ScopeAdmin}}, nil
}

// Example wires the API the way core/app does and launches the first
// example task a new organisation receives, with the example input its
// schema carries.
func Example() {
	dir, _ := os.MkdirTemp("", "kadu-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(context.Background(), store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(dir, "kadu.db")})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	cfg := config.Defaults()
	authn := auth.NewAuthenticator(oneToken{}, "https://kadu.example/mcp", nil)
	a, err := api.New(api.Options{Store: db, Plans: cfg.Plans, DefaultPlan: cfg.Orgs.DefaultPlan,
		AutoProvision: true, ExampleTasks: true, Queue: noQueue{}, Challenger: authn})
	if err != nil {
		panic(err)
	}
	e := echo.New()
	a.Register(e.Group(api.BasePath, a.Middlewares(authn.Middleware())...))
	srv := httptest.NewServer(e)
	defer srv.Close()

	call := func(method, path, body string) string {
		req, _ := http.NewRequest(method, srv.URL+api.BasePath+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dev")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return fmt.Sprintf("%d %s", res.StatusCode, b)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			Name        string `json:"name"`
			InputSchema struct {
				Examples []any `json:"examples"`
			} `json:"input_schema"`
		} `json:"data"`
	}
	_, body, _ := strings.Cut(call("GET", "/tasks?q=concilia", ""), " ")
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		panic(err)
	}
	task := list.Data[0]
	input, _ := json.Marshal(map[string]any{"input": task.InputSchema.Examples[0]})
	status, _, _ := strings.Cut(call("POST", "/tasks/"+task.ID+"/run", string(input)), " ")
	fmt.Println(task.Name, status)
	// Output: Conciliação diária 202
}
