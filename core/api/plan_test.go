package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

func TestPlans(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"CostCap":            testCostCap,
		"ExecutionsPerMonth": testExecutionsPerMonth,
		"Usage":              testUsage,
		"ExampleTasks":       testProvisionExamples,
		"NoAutoProvision":    testNoAutoProvision,
		"PlaybookValidated":  testPlaybookValidated,
	})
}

// tinyPlan allows 100 centavos and 3 executions a month, 50 per execution.
func tinyPlan(o *Options) {
	o.Plans = map[string]config.Plan{"tiny": {ConcurrentExecutions: 1, ExecutionsPerMonth: 3, MaxFileSizeBytes: 1 << 20,
		Retention: 24 * time.Hour, Webhooks: 1, RequestsPerMinute: 60, CostCapCents: 100, MaxCostPerExecutionCents: 50}}
	o.DefaultPlan = "tiny"
}

func testCostCap(t *testing.T, db *store.DB) {
	e := newEnv(t, db, tinyPlan)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil) // max_cost_cents defaults to the plan's 50
	first := e.launch(tok, task)
	if _, err := db.AddCost(context.Background(), org, first, 60); err != nil {
		t.Fatal(err)
	}
	r := e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}})
	wantProblem(t, r, http.StatusPaymentRequired, "cost_cap_exceeded", "")
	p := r.json(t)["errors"].([]any)[0].(map[string]any)
	next := store.MonthStart(time.Now()).AddDate(0, 1, 0)
	if p["cap_cents"] != 100.0 || p["used_cents"] != 60.0 || p["resets_at"] != ts(next) {
		t.Errorf("problem = %v, want cap 100, used 60, resets_at %s", p, ts(next))
	}
	// 60 used + at most 40 for this one fits the cap.
	must(t, e.do(tok, "PATCH", "/tasks/"+task, map[string]any{"max_cost_cents": 40}), http.StatusOK)
	e.launch(tok, task)
	if _, err := db.AddCost(context.Background(), org, first, 40); err != nil {
		t.Fatal(err)
	}
	// At the cap, even a task that costs nothing more is refused.
	wantProblem(t, e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}}),
		http.StatusPaymentRequired, "cost_cap_exceeded", "")
}

func testExecutionsPerMonth(t *testing.T, db *store.DB) {
	e := newEnv(t, db, tinyPlan)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", map[string]any{"max_cost_cents": 1})
	for range 3 {
		e.launch(tok, task)
	}
	r := e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}})
	wantProblem(t, r, http.StatusPaymentRequired, "plan_limit_exceeded", "")
	if p := r.json(t)["errors"].([]any)[0].(map[string]any); p["limit"] != 3.0 || p["used"] != 3.0 || p["resets_at"] == nil {
		t.Errorf("problem = %v", p)
	}
	if enq, _, _ := e.queue.snapshot(); len(enq) != 3 {
		t.Errorf("enqueued %d, want 3", len(enq))
	}
}

func testUsage(t *testing.T, db *store.DB) {
	e := newEnv(t, db, tinyPlan)
	org := newOrg()
	tok := e.token(viewer(org))
	task := e.createTask(e.token(owner(org)), "t", map[string]any{"max_cost_cents": 10})
	x := e.launch(e.token(owner(org)), task)
	if _, err := db.AddCost(context.Background(), org, x, 7); err != nil {
		t.Fatal(err)
	}
	e.executionIn(org, task, "owner-1", store.StatusRunning)
	u := must(t, e.do(tok, "GET", "/usage", nil), http.StatusOK)
	mtd, rem, lim := u["month_to_date"].(map[string]any), u["remaining"].(map[string]any), u["limits"].(map[string]any)
	now := time.Now()
	if u["plan"] != "tiny" || u["cost_cap_cents"] != 100.0 || u["currency"] != "BRL" || u["active_executions"] != 1.0 ||
		mtd["cost_cents"] != 7.0 || mtd["executions"] != 2.0 || rem["cost_cents"] != 93.0 || rem["executions"] != 1.0 ||
		lim["executions_per_month"] != 3.0 || lim["max_cost_per_execution_cents"] != 50.0 || lim["retention_seconds"] != 86400.0 ||
		u["period_start"] != ts(store.MonthStart(now)) || u["resets_at"] != ts(store.MonthStart(now).AddDate(0, 1, 0)) {
		t.Errorf("usage = %v", u)
	}
}

// testProvisionExamples: an organisation seen for the first time gets the
// example tasks, once, even when its first requests arrive together; each
// runs with the example its schema carries.
func testProvisionExamples(t *testing.T, db *store.DB) {
	e := newEnv(t, db, func(o *Options) { o.ExampleTasks = true; o.ValidatePlaybook = agent.ValidatePlaybook })
	org := newOrg()
	tok := e.token(member(org))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if r := e.do(tok, "GET", "/tasks", nil); r.status != http.StatusOK {
				t.Errorf("first sight: %d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	tasks := must(t, e.do(tok, "GET", "/tasks", nil), http.StatusOK)["data"].([]any)
	if len(tasks) != len(exampleTasks(config.Plan{})) {
		t.Fatalf("%d tasks, want the %d examples", len(tasks), len(exampleTasks(config.Plan{})))
	}
	for _, it := range tasks {
		task := it.(map[string]any)
		raw, _ := json.Marshal(task["input_schema"])
		var doc struct {
			Examples []json.RawMessage `json:"examples"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Examples) == 0 {
			t.Fatalf("%s: no examples in %s", task["name"], raw)
		}
		for _, ex := range doc.Examples {
			x := must(t, e.do(tok, "POST", "/tasks/"+task["id"].(string)+"/run", map[string]any{"input": ex}), http.StatusAccepted)
			if x["cost"].(map[string]any)["max_cost_cents"] != 2000.0 {
				t.Errorf("%s: cost = %v", task["name"], x["cost"])
			}
		}
		// What the API stored is what the runner accepts.
		pb, _ := json.Marshal(task["playbook"])
		if _, err := agent.ValidatePlaybook(pb); err != nil {
			t.Errorf("%s: stored playbook: %v", task["name"], err)
		}
	}
	// A new organisation on a server without examples gets none.
	plain := newEnv(t, db, nil)
	if l := must(t, plain.do(plain.token(owner(newOrg())), "GET", "/tasks", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("examples without ExampleTasks: %v", l)
	}
}

func testNoAutoProvision(t *testing.T, db *store.DB) {
	e := newEnv(t, db, func(o *Options) { o.AutoProvision = false; o.ExampleTasks = true })
	org := newOrg()
	tok := e.token(owner(org))
	wantProblem(t, e.do(tok, "GET", "/tasks", nil), http.StatusForbidden, "org_not_provisioned", "")
	wantProblem(t, e.do(tok, "POST", "/tasks", map[string]any{"name": "x"}), http.StatusForbidden, "org_not_provisioned", "")
	if _, _, err := db.EnsureOrg(context.Background(), org, "developer"); err != nil {
		t.Fatal(err)
	}
	if l := must(t, e.do(tok, "GET", "/tasks", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("an operator-provisioned organisation got tasks: %v", l)
	}
}

func testPlaybookValidated(t *testing.T, db *store.DB) {
	e := newEnv(t, db, func(o *Options) { o.ValidatePlaybook = agent.ValidatePlaybook; tinyPlan(o) })
	org := newOrg()
	tok := e.token(owner(org))
	bad := map[string]any{"name": "x", "playbook": map[string]any{"steps": []any{map[string]any{"type": "teleport"}}}}
	wantProblem(t, e.do(tok, "POST", "/tasks", bad), http.StatusUnprocessableEntity, "validation_error", "playbook")
	// With a validator, a launch is estimated at the playbook's fixed cost
	// (5 + 2 + 2 = 9 centavos), not at max_cost_cents.
	task := must(t, e.do(tok, "POST", "/tasks", map[string]any{"name": "resumo", "playbook": json.RawMessage(`{"steps":[
		{"type":"parse_statement","params":{"source":{"pointer":"/input/csv"}}},{"type":"categorize"},{"type":"summarize"}]}`)}),
		http.StatusCreated)["id"].(string)
	x := e.launch(tok, task)
	if _, err := db.AddCost(context.Background(), org, x, 90); err != nil {
		t.Fatal(err)
	}
	must(t, e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{}}), http.StatusAccepted) // 90 + 9 ≤ 100
	if _, err := db.AddCost(context.Background(), org, x, 2); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{}}),
		http.StatusPaymentRequired, "cost_cap_exceeded", "") // 92 + 9 > 100
}
