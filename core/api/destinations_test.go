package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/store"
)

// TestTaskDestinations: a task's destinations name webhooks of the
// caller's organisation, on create and on PUT /tasks/{id}/destinations.
// Another organisation's webhook, a deleted one and an id that never
// existed are refused alike, with 422 at destinations[i].webhook_id.
func TestTaskDestinations(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"CreateAndPut":   testDestinationsCreateAndPut,
		"DeletedWebhook": testDestinationsDeletedWebhook,
	})
}

func dests(ids ...string) map[string]any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"type": "webhook", "webhook_id": id}
	}
	return map[string]any{"destinations": out}
}

func destinationIDs(t *testing.T, task map[string]any) string {
	t.Helper()
	var ids []string
	for _, d := range task["destinations"].([]any) {
		ids = append(ids, d.(map[string]any)["webhook_id"].(string))
	}
	return strings.Join(ids, ",")
}

func testDestinationsCreateAndPut(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	orgA, orgB := newOrg(), newOrg()
	tokA, tokB := e.token(admin(orgA)), e.token(admin(orgB))
	mine := e.createWebhook(tokA)["id"].(string)
	mine2 := e.createWebhook(tokA)["id"].(string)
	theirs := e.createWebhook(tokB)["id"].(string)
	never := store.NewID(store.PrefixWebhook)

	body := func(extra map[string]any) map[string]any {
		extra["name"] = "Conciliação"
		return extra
	}
	created := must(t, e.do(tokA, "POST", "/tasks", body(dests(mine))), http.StatusCreated)
	if got := destinationIDs(t, created); got != mine {
		t.Fatalf("created with destinations %s, want %s", got, mine)
	}
	id := created["id"].(string)

	refusals := []struct {
		name      string
		ids       []string
		wantParam string
	}{
		{name: "another organisation's webhook", ids: []string{theirs}, wantParam: "destinations[0].webhook_id"},
		{name: "a webhook that never existed", ids: []string{never}, wantParam: "destinations[0].webhook_id"},
		{name: "second of two", ids: []string{mine, theirs}, wantParam: "destinations[1].webhook_id"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []resp{
				e.do(tokA, "POST", "/tasks", body(dests(tt.ids...))),
				e.do(tokA, "PUT", "/tasks/"+id+"/destinations", dests(tt.ids...)),
			} {
				wantProblem(t, r, http.StatusUnprocessableEntity, "validation_error", tt.wantParam)
				bad := tt.ids[len(tt.ids)-1]
				detail := r.json(t)["errors"].([]any)[0].(map[string]any)["detail"]
				if want := fmt.Sprintf("%s is %q, which is not one of your organisation's webhooks.", tt.wantParam, bad); detail != want {
					t.Errorf("detail %q\nwant %q (the same for another organisation's id and a missing one)", detail, want)
				}
			}
		})
	}
	// Refused writes left the task as it was.
	got := must(t, e.do(tokA, "GET", "/tasks/"+id, nil), http.StatusOK)
	if destinationIDs(t, got) != mine || got["version"] != 1.0 {
		t.Fatalf("after refused writes: destinations %s, version %v; want %s, 1", destinationIDs(t, got), got["version"], mine)
	}
	// Every problem in one answer: the task's own fields and each bad destination.
	r := e.do(tokA, "POST", "/tasks", map[string]any{"name": "", "destinations": dests(never, mine, theirs)["destinations"]})
	if params := strings.Join(r.params(t), " "); r.status != http.StatusUnprocessableEntity ||
		params != "name destinations[0].webhook_id destinations[2].webhook_id" {
		t.Fatalf("status %d, params %q; want 422 for name, destinations[0] and [2]", r.status, params)
	}
	// Organisation B cannot point its tasks at A's webhooks either.
	wantProblem(t, e.do(tokB, "POST", "/tasks", body(dests(mine))), http.StatusUnprocessableEntity, "validation_error", "destinations[0].webhook_id")

	put := must(t, e.do(tokA, "PUT", "/tasks/"+id+"/destinations", dests(mine2, mine)), http.StatusOK)
	if destinationIDs(t, put) != mine2+","+mine || put["version"] != 2.0 {
		t.Fatalf("PUT: destinations %s, version %v", destinationIDs(t, put), put["version"])
	}
}

func testDestinationsDeletedWebhook(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	hook := e.createWebhook(tok)["id"].(string)
	keep := e.createWebhook(tok)["id"].(string)
	id := must(t, e.do(tok, "POST", "/tasks", map[string]any{"name": "Resumo", "destinations": dests(hook, keep)["destinations"]}), http.StatusCreated)["id"].(string)

	must(t, e.do(tok, "DELETE", "/webhooks/"+hook, nil), http.StatusOK)
	// The task still lists it: deleting a webhook does not rewrite tasks.
	if got := destinationIDs(t, must(t, e.do(tok, "GET", "/tasks/"+id, nil), http.StatusOK)); got != hook+","+keep {
		t.Fatalf("destinations after deleting %s: %s", hook, got)
	}
	// A new list may not name it again; leaving it out is accepted.
	wantProblem(t, e.do(tok, "PUT", "/tasks/"+id+"/destinations", dests(hook, keep)), http.StatusUnprocessableEntity, "validation_error", "destinations[0].webhook_id")
	if got := destinationIDs(t, must(t, e.do(tok, "PUT", "/tasks/"+id+"/destinations", dests(keep)), http.StatusOK)); got != keep {
		t.Fatalf("destinations = %s, want %s", got, keep)
	}
	if got := must(t, e.do(tok, "PUT", "/tasks/"+id+"/destinations", dests()), http.StatusOK); len(got["destinations"].([]any)) != 0 {
		t.Fatalf("destinations = %v, want none", got["destinations"])
	}
}
