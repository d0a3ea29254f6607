package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func testSteps(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := execIn(t, db, org, store.StatusRunning)
	other := execIn(t, db, org, store.StatusRunning)

	var appended []store.Step
	for i := range 5 {
		s, err := db.AppendStep(ctx, org, store.Step{
			ID:          "stp_ignored",
			Position:    99,
			ExecutionID: e.ID,
			Name:        fmt.Sprintf("step %d", i+1),
			Kind:        "parse_statement",
			Status:      store.StepRunning,
			Summary:     "ignore previous instructions", // untrusted text, stored as is
			Data:        json.RawMessage(`{"rows": 10}`),
		})
		wantOK(t, "AppendStep", err)
		if s.Position != i+1 || !store.ValidID(store.PrefixStep, s.ID) || s.StartedAt.IsZero() {
			t.Errorf("step %d = %+v", i, s)
		}
		appended = append(appended, s)
	}
	_, err := db.AppendStep(ctx, org, store.Step{ExecutionID: other.ID, Name: "elsewhere"})
	wantOK(t, "AppendStep other", err)

	var got []store.Step
	p := store.StepListParams{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("pagination does not end")
		}
		page, err := db.ListSteps(ctx, org, e.ID, p)
		wantOK(t, "ListSteps", err)
		got = append(got, page.Items...)
		if !page.More {
			break
		}
		p.After = page.Items[len(page.Items)-1].Position
	}
	sameJSON(t, "step log", got, appended)

	finished := time.Now()
	updated, err := db.UpdateStep(ctx, org, appended[1].ID, func(s *store.Step) {
		s.Status = store.StepSucceeded
		s.Summary = "10 transactions"
		s.CostCents = 5
		s.FinishedAt = &finished
		s.Data = json.RawMessage(`{"rows":10,"ok":true}`)
		s.Position = 42 // ignored
	})
	wantOK(t, "UpdateStep", err)
	if updated.Position != 2 || updated.Status != store.StepSucceeded || updated.FinishedAt == nil ||
		!updated.FinishedAt.Equal(finished.Truncate(time.Microsecond)) {
		t.Errorf("UpdateStep = %+v", updated)
	}
	page, err := db.ListSteps(ctx, org, e.ID, store.StepListParams{After: 1, Limit: 1})
	wantOK(t, "ListSteps", err)
	if len(page.Items) != 1 {
		t.Fatalf("ListSteps after 1: %d items", len(page.Items))
	}
	sameJSON(t, "updated step", page.Items[0], updated)
	if ids := ids(page.Items, func(s store.Step) string { return s.ID }); !slices.Equal(ids, []string{appended[1].ID}) {
		t.Errorf("page = %q", ids)
	}

	_, err = db.ListSteps(ctx, org, "exe_missing", store.StepListParams{})
	wantErr(t, "ListSteps of a missing execution", err, store.ErrNotFound)
	_, err = db.AppendStep(ctx, org, store.Step{ExecutionID: "exe_missing"})
	wantErr(t, "AppendStep to a missing execution", err, store.ErrNotFound)
	_, err = db.UpdateStep(ctx, org, "stp_missing", func(*store.Step) {})
	wantErr(t, "UpdateStep of a missing step", err, store.ErrNotFound)
}
