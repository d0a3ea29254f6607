package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/kobana/kadu/core/store"
)

func testTaskCRUD(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	// Key order and spacing must survive: forms render properties in order.
	schema := json.RawMessage(`{"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "number"}}}`)
	playbook := json.RawMessage(`[{"kind":"parse_statement"},{"kind":"summarize"}]`)
	in := store.Task{
		ID:             "tsk_ignored", // the store sets ids, versions and times
		Version:        7,
		Name:           "Conciliação",
		Description:    "Concilia recebíveis",
		Instructions:   "Use o extrato",
		InputSchema:    schema,
		Playbook:       playbook,
		LaunchPolicy:   store.LaunchPolicy{Roles: []string{"member"}, UserIDs: []string{"usr_1"}},
		Destinations:   []store.Destination{{Type: "webhook", WebhookID: "whk_1"}},
		MaxCostCents:   1234,
		TimeoutSeconds: 60,
	}
	created, err := db.CreateTask(ctx, org, in)
	wantOK(t, "CreateTask", err)
	if !store.ValidID(store.PrefixTask, created.ID) || created.OrgID != org || created.Version != 1 || created.CreatedAt.IsZero() {
		t.Fatalf("CreateTask = %+v", created)
	}

	got, err := db.GetTask(ctx, org, created.ID)
	wantOK(t, "GetTask", err)
	sameJSON(t, "GetTask", got, created)
	if string(got.InputSchema) != string(schema) || string(got.Playbook) != string(playbook) {
		t.Errorf("JSON text changed: schema %s, playbook %s", got.InputSchema, got.Playbook)
	}

	// Empty lists read back as [], absent JSON as nil.
	bare, err := db.CreateTask(ctx, org, store.Task{Name: "bare"})
	wantOK(t, "CreateTask bare", err)
	bare, err = db.GetTask(ctx, org, bare.ID)
	wantOK(t, "GetTask bare", err)
	if bare.LaunchPolicy.Roles == nil || bare.LaunchPolicy.UserIDs == nil || bare.Destinations == nil ||
		bare.InputSchema != nil || bare.Playbook != nil {
		t.Errorf("bare task = %+v", bare)
	}

	name, desc, maxCost := "Conciliação bancária", "nova", int64(99)
	updated, err := db.UpdateTask(ctx, org, created.ID, store.TaskPatch{Name: &name, Description: &desc, MaxCostCents: &maxCost})
	wantOK(t, "UpdateTask", err)
	want := created
	want.Name, want.Description, want.MaxCostCents, want.Version = name, desc, maxCost, 2
	want.UpdatedAt = updated.UpdatedAt
	sameJSON(t, "UpdateTask", updated, want)
	if updated.UpdatedAt.Before(created.UpdatedAt) {
		t.Errorf("updated_at went back: %v < %v", updated.UpdatedAt, created.UpdatedAt)
	}

	lp := store.LaunchPolicy{Roles: []string{"admin"}, UserIDs: []string{}}
	updated, err = db.SetLaunchPolicy(ctx, org, created.ID, lp)
	wantOK(t, "SetLaunchPolicy", err)
	if updated.Version != 3 || !slices.Equal(updated.LaunchPolicy.Roles, lp.Roles) {
		t.Errorf("SetLaunchPolicy = %+v", updated)
	}
	dests := []store.Destination{{Type: "webhook", WebhookID: "whk_2"}, {Type: "webhook", WebhookID: "whk_3"}}
	updated, err = db.SetDestinations(ctx, org, created.ID, dests)
	wantOK(t, "SetDestinations", err)
	if updated.Version != 4 || !slices.Equal(updated.Destinations, dests) {
		t.Errorf("SetDestinations = %+v", updated)
	}
	got, err = db.GetTask(ctx, org, created.ID)
	wantOK(t, "GetTask", err)
	sameJSON(t, "GetTask after updates", got, updated)

	_, err = db.UpdateTask(ctx, org, "tsk_missing", store.TaskPatch{Name: &name})
	wantErr(t, "UpdateTask of a missing task", err, store.ErrNotFound)
}

func testTaskInvalidJSON(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	if _, err := db.CreateTask(ctx, org, store.Task{Name: "x", InputSchema: json.RawMessage(`{"type":`)}); err == nil {
		t.Errorf("CreateTask with invalid input_schema: no error")
	}
	task := newTask(t, db, org, "x")
	bad := json.RawMessage(`not json`)
	if _, err := db.UpdateTask(ctx, org, task.ID, store.TaskPatch{Playbook: &bad}); err == nil {
		t.Errorf("UpdateTask with invalid playbook: no error")
	}
	got, err := db.GetTask(ctx, org, task.ID)
	wantOK(t, "GetTask", err)
	if got.Version != 1 {
		t.Errorf("a failed update changed the version to %d", got.Version)
	}
	page, err := db.ListTasks(ctx, org, "", store.ListParams{})
	wantOK(t, "ListTasks", err)
	if len(page.Items) != 1 {
		t.Errorf("%d tasks stored, want 1", len(page.Items))
	}
}

func testTaskSearch(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	for _, tk := range []store.Task{
		{Name: "Conciliação bancária", Description: "Extratos OFX"},
		{Name: "Relatório", Description: "Resumo MENSAL de custos"},
		{Name: "100% automático"},
		{Name: "under_score"},
		{Name: `back\slash`},
	} {
		_, err := db.CreateTask(ctx, org, tk)
		wantOK(t, "CreateTask", err)
	}
	tests := []struct {
		q    string
		want []string
	}{
		{q: "CONCILIAÇÃO", want: []string{"Conciliação bancária"}},
		{q: "ofx", want: []string{"Conciliação bancária"}},
		{q: "mensal", want: []string{"Relatório"}},
		{q: "%", want: []string{"100% automático"}},
		{q: "_", want: []string{"under_score"}},
		{q: `\`, want: []string{`back\slash`}},
		{q: "zzz", want: []string{}},
		{q: "", want: []string{`back\slash`, "under_score", "100% automático", "Relatório", "Conciliação bancária"}},
	}
	for _, tt := range tests {
		page, err := db.ListTasks(ctx, org, tt.q, store.ListParams{})
		wantOK(t, "ListTasks", err)
		got := ids(page.Items, func(t store.Task) string { return t.Name })
		if !slices.Equal(got, tt.want) {
			t.Errorf("ListTasks(q=%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func testTaskConcurrentUpdates(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "contended")
	const n = 10
	errs := make([]error, n)
	concurrently(n, func(i int) {
		name := fmt.Sprintf("name %d", i)
		_, errs[i] = db.UpdateTask(ctx, org, task.ID, store.TaskPatch{Name: &name})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("update %d: %v", i, err)
		}
	}
	got, err := db.GetTask(ctx, org, task.ID)
	wantOK(t, "GetTask", err)
	if got.Version != 1+n {
		t.Errorf("version = %d after %d updates, want %d", got.Version, n, 1+n)
	}
}

// testTaskPagination pages through tasks while others are created: every
// task that existed before the first page appears exactly once, in order.
func testTaskPagination(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	var want []string
	for i := range 25 {
		want = append(want, newTask(t, db, org, fmt.Sprintf("task %02d", i)).ID)
	}
	slices.Reverse(want)

	var got []string
	p := store.ListParams{Limit: 7}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("pagination does not end")
		}
		page, err := db.ListTasks(ctx, org, "", p)
		wantOK(t, "ListTasks", err)
		got = append(got, ids(page.Items, taskID)...)
		newTask(t, db, org, "inserted while paging")
		if !page.More {
			break
		}
		p.Before = page.Items[len(page.Items)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %q\nwant %q", got, want)
	}

	page, err := db.ListTasks(ctx, org, "", store.ListParams{})
	wantOK(t, "ListTasks default limit", err)
	if len(page.Items) != store.DefaultListLimit || !page.More {
		t.Errorf("default page: %d items, more %v; want %d, true", len(page.Items), page.More, store.DefaultListLimit)
	}
}

func testTaskSoftDelete(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "doomed")
	keep := newTask(t, db, org, "kept")
	running := driveTo(t, db, newExecution(t, db, org, task.ID), store.StatusRunning)

	wantOK(t, "SoftDeleteTask", db.SoftDeleteTask(ctx, org, task.ID))

	_, err := db.GetTask(ctx, org, task.ID)
	wantErr(t, "GetTask", err, store.ErrNotFound)
	name := "x"
	_, err = db.UpdateTask(ctx, org, task.ID, store.TaskPatch{Name: &name})
	wantErr(t, "UpdateTask", err, store.ErrNotFound)
	_, err = db.SetLaunchPolicy(ctx, org, task.ID, store.LaunchPolicy{})
	wantErr(t, "SetLaunchPolicy", err, store.ErrNotFound)
	_, err = db.SetDestinations(ctx, org, task.ID, nil)
	wantErr(t, "SetDestinations", err, store.ErrNotFound)
	wantErr(t, "SoftDeleteTask again", db.SoftDeleteTask(ctx, org, task.ID), store.ErrNotFound)
	_, err = db.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
	wantErr(t, "CreateExecution of a deleted task", err, store.ErrNotFound)

	page, err := db.ListTasks(ctx, org, "", store.ListParams{})
	wantOK(t, "ListTasks", err)
	if got := ids(page.Items, taskID); !slices.Equal(got, []string{keep.ID}) {
		t.Errorf("ListTasks = %q, want only %s", got, keep.ID)
	}
	page, err = db.ListTasks(ctx, org, "doomed", store.ListParams{})
	wantOK(t, "ListTasks q", err)
	if len(page.Items) != 0 {
		t.Errorf("ListTasks(q) found the deleted task")
	}

	// Deleting a task blocks new runs, not running ones.
	e, err := db.Transition(ctx, org, running.ID, []store.Status{store.StatusRunning}, store.StatusSucceeded, nil)
	if err != nil || e.Status != store.StatusSucceeded {
		t.Errorf("finishing an execution of a deleted task: %v, %v", e.Status, err)
	}
}
