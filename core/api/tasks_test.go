package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func TestTasks(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"CRUD":            testTaskCRUD,
		"CreateInvalid":   testTaskCreateInvalid,
		"PatchInvalid":    testTaskPatchInvalid,
		"Pagination":      testTaskPagination,
		"MalformedIDs":    testMalformedIDs,
		"BodyConventions": testBodyConventions,
	})
}

func testTaskCRUD(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))

	r := e.do(tok, "POST", "/tasks", map[string]any{
		"name": "  Conciliação diária ", "description": "Concilia AÇÃO e extrato", "instructions": "faça",
		"input_schema": json.RawMessage(simpleSchema), "playbook": map[string]any{"version": 1, "steps": []any{}},
	})
	created := must(t, r, http.StatusCreated)
	id := created["id"].(string)
	if !store.ValidID(store.PrefixTask, id) || r.header.Get("Location") != BasePath+"/tasks/"+id {
		t.Fatalf("id %q, Location %q", id, r.header.Get("Location"))
	}
	want := map[string]any{"name": "Conciliação diária", "max_cost_cents": 2000.0, "timeout_seconds": 900.0, "version": 1.0}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("%s = %v, want %v", k, created[k], v)
		}
	}
	for _, k := range []string{"id", "name", "description", "instructions", "input_schema", "playbook", "launch_policy",
		"destinations", "max_cost_cents", "timeout_seconds", "version", "created_at", "updated_at"} {
		if _, ok := created[k]; !ok {
			t.Errorf("task has no %s", k)
		}
	}
	if len(created) != 13 {
		t.Errorf("task has %d fields, want 13: %v", len(created), created)
	}
	if ca, err := time.Parse(time.RFC3339, created["created_at"].(string)); err != nil || !strings.HasSuffix(created["created_at"].(string), "Z") || time.Since(ca) > time.Minute {
		t.Errorf("created_at %v: want RFC 3339 UTC, now", created["created_at"])
	}
	if lp := created["launch_policy"].(map[string]any); len(lp["roles"].([]any)) != 0 || len(lp["user_ids"].([]any)) != 0 {
		t.Errorf("launch_policy = %v, want empty lists", lp)
	}

	got := must(t, e.do(tok, "GET", "/tasks/"+id, nil), http.StatusOK)
	if got["name"] != "Conciliação diária" || got["input_schema"].(map[string]any)["required"] == nil {
		t.Errorf("get = %v", got)
	}
	for q, n := range map[string]int{"ação": 1, "CONCILIA": 1, "nothing": 0} {
		l := must(t, e.do(tok, "GET", "/tasks?q="+q, nil), http.StatusOK)
		if len(l["data"].([]any)) != n {
			t.Errorf("q=%s: %d tasks, want %d", q, len(l["data"].([]any)), n)
		}
	}

	patched := must(t, e.do(tok, "PATCH", "/tasks/"+id, map[string]any{"description": "nova", "max_cost_cents": 150, "timeout_seconds": 60}), http.StatusOK)
	if patched["description"] != "nova" || patched["max_cost_cents"] != 150.0 || patched["timeout_seconds"] != 60.0 ||
		patched["version"] != 2.0 || patched["name"] != "Conciliação diária" || patched["instructions"] != "faça" {
		t.Errorf("patch = %v", patched)
	}

	lp := must(t, e.do(tok, "PUT", "/tasks/"+id+"/launch_policy", map[string]any{"roles": []string{"admin"}, "user_ids": []string{"bob"}}), http.StatusOK)
	if p := lp["launch_policy"].(map[string]any); p["roles"].([]any)[0] != "admin" || p["user_ids"].([]any)[0] != "bob" || lp["version"] != 3.0 {
		t.Errorf("launch_policy = %v", lp)
	}
	whk := e.createWebhook(tok)["id"].(string)
	ds := must(t, e.do(tok, "PUT", "/tasks/"+id+"/destinations", map[string]any{"destinations": []any{map[string]any{"type": "webhook", "webhook_id": whk}}}), http.StatusOK)
	if d := ds["destinations"].([]any); len(d) != 1 || d[0].(map[string]any)["webhook_id"] != whk {
		t.Errorf("destinations = %v", ds["destinations"])
	}

	del := must(t, e.do(tok, "DELETE", "/tasks/"+id, nil), http.StatusOK)
	if del["id"] != id || del["deleted"] != true {
		t.Errorf("delete = %v", del)
	}
	for _, r := range []resp{
		e.do(tok, "GET", "/tasks/"+id, nil),
		e.do(tok, "PATCH", "/tasks/"+id, map[string]any{"name": "x"}),
		e.do(tok, "DELETE", "/tasks/"+id, nil),
		e.do(tok, "POST", "/tasks/"+id+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}}),
		e.do(tok, "PUT", "/tasks/"+id+"/launch_policy", map[string]any{}),
	} {
		wantProblem(t, r, http.StatusNotFound, "not_found", "")
	}
	if l := must(t, e.do(tok, "GET", "/tasks", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("a deleted task is listed: %v", l)
	}
}

func testTaskCreateInvalid(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	tok := e.token(owner(newOrg()))
	valid := func(mod map[string]any) map[string]any {
		b := map[string]any{"name": "t", "input_schema": json.RawMessage(simpleSchema)}
		for k, v := range mod {
			if v == nil {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name       string
		body       any
		wantParams []string
	}{
		{name: "no name", body: valid(map[string]any{"name": nil}), wantParams: []string{"name"}},
		{name: "blank name", body: valid(map[string]any{"name": "   "}), wantParams: []string{"name"}},
		{name: "name not a string", body: valid(map[string]any{"name": 12}), wantParams: []string{"name"}},
		{name: "name too long", body: valid(map[string]any{"name": strings.Repeat("a", 201)}), wantParams: []string{"name"}},
		{name: "unknown fields", body: valid(map[string]any{"colour": "blue", "owner": 1}), wantParams: []string{"colour", "owner"}},
		{name: "schema does not compile", body: valid(map[string]any{"input_schema": map[string]any{"type": "object", "properties": 3}}), wantParams: []string{"input_schema"}},
		{name: "schema not an object", body: valid(map[string]any{"input_schema": "string"}), wantParams: []string{"input_schema"}},
		{name: "schema for a string", body: valid(map[string]any{"input_schema": map[string]any{"type": "string"}}), wantParams: []string{"input_schema"}},
		{name: "example invalid", body: valid(map[string]any{"input_schema": json.RawMessage(
			`{"type":"object","properties":{"n":{"type":"integer"}},"examples":[{"n":1},{"n":"x"}]}`)}), wantParams: []string{"input_schema.examples[1].n"}},
		{name: "playbook a string", body: valid(map[string]any{"playbook": "steps"}), wantParams: []string{"playbook"}},
		{name: "max cost above the plan", body: valid(map[string]any{"max_cost_cents": 2001}), wantParams: []string{"max_cost_cents"}},
		{name: "max cost zero", body: valid(map[string]any{"max_cost_cents": 0}), wantParams: []string{"max_cost_cents"}},
		{name: "max cost fractional", body: valid(map[string]any{"max_cost_cents": 1.5}), wantParams: []string{"max_cost_cents"}},
		{name: "timeout zero", body: valid(map[string]any{"timeout_seconds": 0}), wantParams: []string{"timeout_seconds"}},
		{name: "timeout over a day", body: valid(map[string]any{"timeout_seconds": 86401}), wantParams: []string{"timeout_seconds"}},
		{name: "launch policy role", body: valid(map[string]any{"launch_policy": map[string]any{"roles": []string{"member", "boss", "viewer"}}}),
			wantParams: []string{"launch_policy.roles[1]", "launch_policy.roles[2]"}},
		{name: "launch policy unknown member", body: valid(map[string]any{"launch_policy": map[string]any{"groups": []string{}}}), wantParams: []string{"launch_policy.groups"}},
		{name: "launch policy user ids", body: valid(map[string]any{"launch_policy": map[string]any{"user_ids": []any{"a", "a", 3}}}),
			wantParams: []string{"launch_policy.user_ids[1]", "launch_policy.user_ids[2]"}},
		{name: "destination shape", body: valid(map[string]any{"destinations": []any{
			map[string]any{"type": "email", "webhook_id": store.NewID(store.PrefixWebhook)},
			map[string]any{"type": "webhook", "webhook_id": "whk_1"},
			"x"}}), wantParams: []string{"destinations[0].type", "destinations[1].webhook_id", "destinations[2]"}},
		{name: "several at once", body: map[string]any{"name": "", "timeout_seconds": "9", "extra": true},
			wantParams: []string{"extra", "name", "timeout_seconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tok, "POST", "/tasks", tt.body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			got := r.params(t)
			slices.Sort(got)
			if strings.Join(got, ",") != strings.Join(tt.wantParams, ",") {
				t.Fatalf("params = %v, want %v: %s", got, tt.wantParams, r.body)
			}
		})
	}
}

func testTaskPatchInvalid(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	tok := e.token(owner(newOrg()))
	id := e.createTask(tok, "t", nil)
	tests := []struct {
		name       string
		body       any
		wantParams []string
	}{
		{name: "empty", body: map[string]any{}, wantParams: nil},
		{name: "launch policy", body: map[string]any{"launch_policy": map[string]any{}}, wantParams: []string{"launch_policy"}},
		{name: "destinations", body: map[string]any{"destinations": []any{}}, wantParams: []string{"destinations"}},
		{name: "null name", body: map[string]any{"name": nil}, wantParams: []string{"name"}},
		{name: "null schema", body: map[string]any{"input_schema": nil}, wantParams: []string{"input_schema"}},
		{name: "bad values", body: map[string]any{"max_cost_cents": -1, "description": 5, "version": 9},
			wantParams: []string{"description", "max_cost_cents", "version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tok, "PATCH", "/tasks/"+id, tt.body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			got := r.params(t)
			slices.Sort(got)
			if strings.Join(got, ",") != strings.Join(tt.wantParams, ",") {
				t.Fatalf("params = %v, want %v", got, tt.wantParams)
			}
		})
	}
	if got := must(t, e.do(tok, "GET", "/tasks/"+id, nil), http.StatusOK); got["version"] != 1.0 {
		t.Errorf("a refused patch changed the task: %v", got)
	}
}

func testTaskPagination(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	var ids []string
	for i := range 5 {
		ids = append(ids, e.createTask(tok, "report "+string(rune('a'+i)), nil))
	}
	slices.Reverse(ids) // newest first
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		path := "/tasks?limit=2&q=report"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		l := must(t, e.do(tok, "GET", path, nil), http.StatusOK)
		meta := l["meta"].(map[string]any)
		if meta["limit"] != 2.0 {
			t.Fatalf("meta = %v", meta)
		}
		for _, it := range l["data"].([]any) {
			seen = append(seen, it.(map[string]any)["id"].(string))
		}
		if meta["next_cursor"] == nil {
			break
		}
		cursor = meta["next_cursor"].(string)
		if page > 5 {
			t.Fatal("too many pages")
		}
	}
	if !slices.Equal(seen, ids) {
		t.Fatalf("pages = %v, want %v", seen, ids)
	}

	first := must(t, e.do(tok, "GET", "/tasks?limit=2&q=report", nil), http.StatusOK)
	cur := first["meta"].(map[string]any)["next_cursor"].(string)
	payload, sig, _ := strings.Cut(cur, ".")
	tampered := payload[:len(payload)-2] + "xx." + sig
	other := e.token(owner(newOrg()))
	for name, r := range map[string]resp{
		"tampered":     e.do(tok, "GET", "/tasks?limit=2&q=report&cursor="+tampered, nil),
		"garbage":      e.do(tok, "GET", "/tasks?cursor=abc", nil),
		"other filter": e.do(tok, "GET", "/tasks?limit=2&q=other&cursor="+cur, nil),
		"no filter":    e.do(tok, "GET", "/tasks?cursor="+cur, nil),
		"other org":    e.do(other, "GET", "/tasks?limit=2&q=report&cursor="+cur, nil),
		"other list":   e.do(tok, "GET", "/executions?cursor="+cur, nil),
	} {
		t.Run(name, func(t *testing.T) { wantProblem(t, r, http.StatusBadRequest, "invalid_cursor", "cursor") })
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=ten", "limit=-1"} {
		wantProblem(t, e.do(tok, "GET", "/tasks?"+q, nil), http.StatusUnprocessableEntity, "validation_error", "limit")
	}
	wantProblem(t, e.do(tok, "GET", "/tasks?q="+strings.Repeat("x", 201), nil), http.StatusUnprocessableEntity, "validation_error", "q")
	wantProblem(t, e.do(tok, "GET", "/tasks?search=x", nil), http.StatusUnprocessableEntity, "validation_error", "search")
	wantProblem(t, e.do(tok, "GET", "/tasks?q=a&q=b", nil), http.StatusUnprocessableEntity, "validation_error", "q")
	if l := must(t, e.do(tok, "GET", "/tasks?limit=100", nil), http.StatusOK); len(l["data"].([]any)) != 5 || l["meta"].(map[string]any)["next_cursor"] != nil {
		t.Errorf("limit=100: %v", l["meta"])
	}
}

func testMalformedIDs(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	tok := e.token(owner(newOrg()))
	for _, path := range []string{"/tasks/nope", "/tasks/tsk_123", "/tasks/TSK_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d",
		"/tasks/" + store.NewID(store.PrefixExecution), "/executions/exe_zz", "/executions/" + store.NewID(store.PrefixTask),
		"/executions/" + store.NewID(store.PrefixExecution) + "/steps"} {
		wantProblem(t, e.do(tok, "GET", path, nil), http.StatusNotFound, "not_found", "")
	}
	for _, path := range []string{"/tasks/nope/run", "/executions/nope/cancel", "/executions/nope/continue"} {
		wantProblem(t, e.do(tok, "POST", path, map[string]any{}), http.StatusNotFound, "not_found", "")
	}
	wantProblem(t, e.do(tok, "DELETE", "/executions/nope", nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "GET", "/nothing", nil), http.StatusNotFound, "not_found", "")
	r := e.do(tok, "DELETE", "/tasks", nil)
	wantProblem(t, r, http.StatusMethodNotAllowed, "method_not_allowed", "")
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow = %q", r.header.Get("Allow"))
	}
	wantProblem(t, e.do("", "GET", "/tasks", nil), http.StatusUnauthorized, "unauthorized", "")
}

func testBodyConventions(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	tok := e.token(owner(newOrg()))
	big := `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`
	wantProblem(t, e.do(tok, "POST", "/tasks", big), http.StatusRequestEntityTooLarge, "payload_too_large", "")
	// Chunked: no Content-Length, the limit is found while reading.
	wantProblem(t, e.do(tok, "POST", "/tasks", chunked{strings.NewReader(big)}), http.StatusRequestEntityTooLarge, "payload_too_large", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", `{"name":`), http.StatusBadRequest, "bad_request", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", `["name"]`), http.StatusBadRequest, "bad_request", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", `{"name":"a"} {}`), http.StatusBadRequest, "bad_request", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", `name=a`, "Content-Type", "application/x-www-form-urlencoded"),
		http.StatusUnsupportedMediaType, "unsupported_media_type", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", `{"name":"a","nme":"b"}`), http.StatusUnprocessableEntity, "validation_error", "nme")
	// An empty body is {}.
	wantProblem(t, e.do(tok, "POST", "/tasks", ""), http.StatusUnprocessableEntity, "validation_error", "name")
	r := e.do(tok, "GET", "/tasks", nil)
	if r.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(r.header.Get("X-Request-Id"), "req_") {
		t.Errorf("headers = %v", r.header)
	}
}
