package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/webhook"
)

// One test per tool group of docs/reference/bundles.md#tool-catalogue; TestToolsEndToEnd runs them. Each
// works in organisations of its own on the shared server.

// summaryTaskJSON is a task that parses the statement in its input and
// summarises it, so that a run succeeds in a few steps.
func summaryTaskJSON(name string) string {
	b, _ := json.Marshal(map[string]any{
		"name": name, "description": "Resume o extrato do dia.", "instructions": "Leia o extrato e resuma.",
		"input_schema": statementInputSchema, "playbook": summaryPlaybook,
	})
	return string(b)
}

var (
	statementInputSchema = map[string]any{"type": "object",
		"properties": map[string]any{"statement_csv": map[string]any{"type": "string"}}, "required": []string{"statement_csv"}}
	summaryPlaybook = map[string]any{"version": 1, "steps": []any{
		map[string]any{"id": "extrato", "type": "parse_statement", "params": map[string]any{"source": map[string]any{"pointer": "/input/statement_csv"}}},
		map[string]any{"id": "categorias", "type": "categorize"},
		map[string]any{"id": "resumo", "type": "summarize"},
	}}
)

// askTaskJSON is a task whose only step asks a question, so that each run
// waits in waiting_input until it is answered or cancelled.
func askTaskJSON(name string) string {
	return `{"name":` + strconv.Quote(name) + `,"playbook":{"version":1,"steps":[` +
		`{"id":"mes","type":"ask","params":{"prompt":"Qual mês devo fechar?"}}]}}`
}

// testTaskTools creates, reads, edits, restricts, points and runs a task,
// reads the usage the run cost, and deletes the task.
func testTaskTools(t *testing.T, fx *toolsFixture) {
	const org = "org_tools_tasks"
	admin := fx.as(t, TokenOptions{OrgID: org, Role: "admin", Subject: "ana"})
	bruno := fx.as(t, TokenOptions{OrgID: org, Role: "member", Subject: "bruno", Scopes: []string{"kadu.run"}})
	carla := fx.as(t, TokenOptions{OrgID: org, Role: "member", Subject: "carla", Scopes: []string{"kadu.run"}})
	input := map[string]any{"statement_csv": statementCSV}

	create := map[string]any{
		"name": "Resumo diário", "description": "Resume o extrato do dia.", "instructions": "Leia o extrato e resuma.",
		"input_schema": statementInputSchema, "playbook": summaryPlaybook, "idempotency_key": "create-resumo",
	}
	task := admin.ok("kadu_tasks_create", create)
	id, _ := task["id"].(string)
	if !strings.HasPrefix(id, "tsk_") || task["name"] != "Resumo diário" || task["version"] != float64(1) {
		t.Fatalf("kadu_tasks_create = %v", task)
	}
	if again := admin.ok("kadu_tasks_create", create); again["id"] != id {
		t.Errorf("kadu_tasks_create with the same idempotency_key made %v, want %s again", again["id"], id)
	}

	list := admin.ok("kadu_tasks_list", map[string]any{"q": "Resumo diário", "limit": 10})
	if got := ids(list); !slices.Equal(got, []string{id}) {
		t.Errorf("kadu_tasks_list q=Resumo diário = %v, want [%s]", got, id)
	}
	got := admin.ok("kadu_tasks_get", map[string]any{"id": id})
	if got["instructions"] != "Leia o extrato e resuma." || len(got["playbook"].(map[string]any)["steps"].([]any)) != 3 {
		t.Errorf("kadu_tasks_get = %v", got)
	}

	updated := admin.ok("kadu_tasks_update", map[string]any{"id": id, "name": "Resumo do extrato", "max_cost_cents": 50})
	if updated["name"] != "Resumo do extrato" || updated["version"] != float64(2) {
		t.Errorf("kadu_tasks_update = %v", updated)
	}
	got = admin.ok("kadu_tasks_get", map[string]any{"id": id})
	if got["name"] != "Resumo do extrato" || got["max_cost_cents"] != float64(50) {
		t.Errorf("after kadu_tasks_update, kadu_tasks_get = name %v, max_cost_cents %v", got["name"], got["max_cost_cents"])
	}

	// Only owners and bruno may run it now (admins always may).
	admin.ok("kadu_tasks_set_launch_policy", map[string]any{"id": id, "roles": []string{"owner"}, "user_ids": []string{"bruno"}})
	got = admin.ok("kadu_tasks_get", map[string]any{"id": id})
	if lp := fmt.Sprint(got["launch_policy"]); lp != "map[roles:[owner] user_ids:[bruno]]" {
		t.Errorf("after kadu_tasks_set_launch_policy, launch_policy = %s", lp)
	}
	carla.fails("kadu_tasks_run", map[string]any{"id": id, "input": input}, "forbidden_role")

	// Results go to a webhook of the organisation.
	hook := mustREST(t, admin.rest, "POST", "/webhooks", 201,
		`{"url":"https://hooks.example.com/resumo","event_codes":["webhook.disabled"]}`)["id"].(string)
	admin.ok("kadu_tasks_set_destinations", map[string]any{"id": id,
		"destinations": []any{map[string]any{"type": "webhook", "webhook_id": hook}}})
	got = mustREST(t, admin.rest, "GET", "/tasks/"+id, 200, "")
	if d := fmt.Sprint(got["destinations"]); d != "[map[type:webhook webhook_id:"+hook+"]]" {
		t.Errorf("after kadu_tasks_set_destinations, GET /tasks/{id} destinations = %s", d)
	}

	run := map[string]any{"id": id, "input": input, "idempotency_key": "run-resumo"}
	exe := bruno.ok("kadu_tasks_run", run)
	exeID, _ := exe["id"].(string)
	if !strings.HasPrefix(exeID, "exe_") || exe["task_id"] != id || exe["launched_by"] != "bruno" || exe["status"] != "queued" {
		t.Fatalf("kadu_tasks_run = %v", exe)
	}
	if again := bruno.ok("kadu_tasks_run", run); again["id"] != exeID {
		t.Errorf("kadu_tasks_run with the same idempotency_key started %v, want %s again", again["id"], exeID)
	}
	done := admin.rest.waitExecution(exeID)
	if done["status"] != "succeeded" || done["task_version"] != got["version"] {
		t.Fatalf("the run ended %v on version %v: %v", done["status"], done["task_version"], done["failure"])
	}

	// The organisation's only run is what the month cost so far.
	usage := admin.ok("kadu_usage_get", map[string]any{})
	spent := usage["month_to_date"].(map[string]any)
	cost := done["cost"].(map[string]any)["amount_cents"]
	if usage["plan"] != "developer" || spent["executions"] != float64(1) || spent["cost_cents"] != cost || cost == float64(0) {
		t.Errorf("kadu_usage_get = plan %v, month_to_date %v; want developer, 1 execution costing %v", usage["plan"], spent, cost)
	}

	deleted := admin.ok("kadu_tasks_delete", map[string]any{"id": id}) // toolCaller confirms in the chat first (docs/reference/confirmation.md)
	if deleted["id"] != id || deleted["deleted"] != true {
		t.Errorf("kadu_tasks_delete = %v", deleted)
	}
	admin.fails("kadu_tasks_get", map[string]any{"id": id}, "not_found")
	if got := ids(admin.ok("kadu_tasks_list", map[string]any{"q": "Resumo"})); slices.Contains(got, id) {
		t.Errorf("kadu_tasks_list still shows the deleted task: %v", got)
	}
	bruno.fails("kadu_tasks_run", map[string]any{"id": id, "input": input}, "not_found")
}

// testExecutionTools follows two runs that wait for an answer: one is
// answered and finishes, the other is cancelled and deleted.
func testExecutionTools(t *testing.T, fx *toolsFixture) {
	const org = "org_tools_executions"
	admin := fx.as(t, TokenOptions{OrgID: org, Role: "admin", Subject: "ana"})
	bruno := fx.as(t, TokenOptions{OrgID: org, Role: "member", Subject: "bruno", Scopes: []string{"kadu.run"}})

	task := mustREST(t, admin.rest, "POST", "/tasks", 201, askTaskJSON("Fechamento"))["id"].(string)
	first := mustREST(t, bruno.rest, "POST", "/tasks/"+task+"/run", 202, `{}`)["id"].(string)
	second := mustREST(t, bruno.rest, "POST", "/tasks/"+task+"/run", 202, `{}`)["id"].(string)
	for _, id := range []string{first, second} {
		if got := bruno.rest.waitExecution(id); got["status"] != "waiting_input" {
			t.Fatalf("execution %s is %v, want waiting_input: %v", id, got["status"], got["failure"])
		}
	}

	list := bruno.ok("kadu_executions_list", map[string]any{"task_id": task, "status": "waiting_input"})
	if got := ids(list); !slices.Equal(got, []string{second, first}) {
		t.Errorf("kadu_executions_list = %v, want [%s %s] (newest first)", got, second, first)
	}
	exe := bruno.ok("kadu_executions_get", map[string]any{"id": first})
	pending, _ := exe["pending_input"].(map[string]any)
	if exe["status"] != "waiting_input" || pending["kind"] != "question" || pending["prompt"] != "Qual mês devo fechar?" {
		t.Errorf("kadu_executions_get = status %v, pending_input %v", exe["status"], pending)
	}
	steps := bruno.ok("kadu_executions_steps_list", map[string]any{"id": first})
	data, _ := steps["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["execution_id"] != first {
		t.Errorf("kadu_executions_steps_list = %v, want the ask step", steps)
	}

	answered := bruno.ok("kadu_executions_continue", map[string]any{"id": first,
		"answer": map[string]any{"answer": "março"}, "idempotency_key": "answer-first"})
	if answered["id"] != first || answered["status"] == "waiting_input" {
		t.Errorf("kadu_executions_continue = id %v, status %v", answered["id"], answered["status"])
	}
	done := bruno.rest.waitExecution(first)
	output, _ := done["output"].(map[string]any)
	if done["status"] != "succeeded" || !strings.Contains(fmt.Sprint(output["data"]), "março") {
		t.Errorf("after kadu_executions_continue the run is %v with output %v", done["status"], output)
	}

	cancelled := bruno.ok("kadu_executions_cancel", map[string]any{"id": second}) // confirmed in the chat first (docs/reference/confirmation.md)
	if cancelled["id"] != second || cancelled["status"] != "cancelled" {
		t.Errorf("kadu_executions_cancel = id %v, status %v", cancelled["id"], cancelled["status"])
	}
	if got := bruno.ok("kadu_executions_get", map[string]any{"id": second}); got["status"] != "cancelled" {
		t.Errorf("after kadu_executions_cancel, kadu_executions_get status = %v", got["status"])
	}
	deleted := admin.ok("kadu_executions_delete", map[string]any{"id": second})
	if deleted["id"] != second || deleted["deleted"] != true {
		t.Errorf("kadu_executions_delete = %v", deleted)
	}
	admin.fails("kadu_executions_get", map[string]any{"id": second}, "not_found")
	if got := ids(admin.ok("kadu_executions_list", map[string]any{"task_id": task})); !slices.Equal(got, []string{first}) {
		t.Errorf("kadu_executions_list after the delete = %v, want [%s]", got, first)
	}

	// An approval exists only once a destructive call made one
	// (docs/reference/confirmation.md#approval-page); an unknown id is the
	// API's not_found.
	bruno.fails("kadu_approvals_get", map[string]any{"id": "apr_" + unknownHex}, "not_found")
}

// testFileTools uploads a file through the URL kadu_files_create gives,
// confirms it, finds it, downloads its bytes and deletes it, as a member.
func testFileTools(t *testing.T, fx *toolsFixture) {
	member := fx.as(t, TokenOptions{OrgID: "org_tools_files", Role: "member", Subject: "bruno",
		Scopes: []string{"kadu.read", "kadu.write"}})
	content := []byte(statementCSV)
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])

	created := member.ok("kadu_files_create", map[string]any{"filename": "extrato-2026-03.csv",
		"content_type": "text/csv", "size_bytes": len(content), "sha256": digest})
	file, _ := created["file"].(map[string]any)
	up, _ := created["upload"].(map[string]any)
	id, _ := file["id"].(string)
	if !strings.HasPrefix(id, "file_") || file["status"] != "pending_upload" || up["method"] != "PUT" {
		t.Fatalf("kadu_files_create = %v", created)
	}
	headers, _ := up["headers"].(map[string]any)
	if status, body := upload(t, "PUT", up["url"].(string), headers, content, nil); status != 200 {
		t.Fatalf("PUT to the upload URL: %d %s", status, body)
	}

	confirmed := member.ok("kadu_files_confirm", map[string]any{"id": id})
	if confirmed["status"] != "ready" || confirmed["sha256"] != digest {
		t.Errorf("kadu_files_confirm = %v", confirmed)
	}
	got := member.ok("kadu_files_get", map[string]any{"id": id})
	if got["status"] != "ready" || got["size_bytes"] != float64(len(content)) || got["purpose"] != "input" ||
		got["filename"] != "extrato-2026-03.csv" {
		t.Errorf("kadu_files_get = %v", got)
	}
	list := member.ok("kadu_files_list", map[string]any{"purpose": "input", "status": "ready"})
	if got := ids(list); !slices.Equal(got, []string{id}) {
		t.Errorf("kadu_files_list purpose=input status=ready = %v, want [%s]", got, id)
	}
	link := member.ok("kadu_files_download", map[string]any{"id": id})
	res, err := http.Get(link["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != statementCSV {
		t.Errorf("GET the kadu_files_download URL: %d %q, want the uploaded bytes", res.StatusCode, body)
	}

	deleted := member.ok("kadu_files_delete", map[string]any{"id": id}) // confirmed in the chat first (docs/reference/confirmation.md)
	if deleted["id"] != id || deleted["deleted"] != true {
		t.Errorf("kadu_files_delete = %v", deleted)
	}
	member.fails("kadu_files_get", map[string]any{"id": id}, "not_found")
	member.fails("kadu_files_download", map[string]any{"id": id}, "not_found")
	if got := ids(member.ok("kadu_files_list", map[string]any{})); slices.Contains(got, id) {
		t.Errorf("kadu_files_list still shows the deleted file: %v", got)
	}
}

// hookReceiver is a webhook endpoint on the loopback that answers 200 and
// keeps what it received.
type hookReceiver struct {
	url string
	got chan receivedHook
}

type receivedHook struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{got: make(chan receivedHook, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		select {
		case r.got <- receivedHook{header: req.Header.Clone(), body: body}:
		default: // more than the test reads: answer anyway
		}
		_, _ = io.WriteString(w, "recebido")
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/kadu"
	return r
}

// next waits for the next delivery.
func (r *hookReceiver) next(t *testing.T) receivedHook {
	t.Helper()
	select {
	case h := <-r.got:
		return h
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver got no delivery in 30s")
		return receivedHook{}
	}
}

// signedBy reports whether one of h's signatures is secret's (Standard
// Webhooks, as a receiver checks it).
func (h receivedHook) signedBy(t *testing.T, secret string) bool {
	t.Helper()
	ts, err := strconv.ParseInt(h.header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q: %v", h.header.Get("webhook-timestamp"), err)
	}
	want, err := webhook.Sign([]string{secret}, h.header.Get("webhook-id"), time.Unix(ts, 0), h.body)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(strings.Fields(h.header.Get("webhook-signature")), want)
}

// testWebhookTools creates a webhook to a receiver on the loopback, sees
// its first delivery arrive signed and logged, rotates the secret, replays
// the delivery (signed with the new secret only) and deletes the webhook.
func testWebhookTools(t *testing.T, fx *toolsFixture) {
	admin := fx.as(t, TokenOptions{OrgID: "org_tools_webhooks", Role: "admin"})
	rcv := newHookReceiver(t)

	created := admin.ok("kadu_webhooks_create", map[string]any{"url": rcv.url, "description": "Conciliação",
		"event_codes": []string{"execution.failed"}, "idempotency_key": "hook-1"}) // confirmed in the chat first (docs/reference/confirmation.md)
	id, _ := created["id"].(string)
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(id, "whk_") || !strings.HasPrefix(secret, "whsec_") || created["status"] != "enabled" {
		t.Fatalf("kadu_webhooks_create = %v", created)
	}
	// The secret is shown once: never in a list or a get.
	list := admin.ok("kadu_webhooks_list", map[string]any{})
	if got := ids(list); !slices.Equal(got, []string{id}) || strings.Contains(fmt.Sprint(list), "whsec_") {
		t.Errorf("kadu_webhooks_list = %v", list)
	}
	got := admin.ok("kadu_webhooks_get", map[string]any{"id": id})
	if _, shown := got["secret"]; shown || got["url"] != rcv.url || got["description"] != "Conciliação" {
		t.Errorf("kadu_webhooks_get = %v", got)
	}

	admin.ok("kadu_webhooks_update", map[string]any{"id": id, "description": "Conciliação diária",
		"event_codes": []string{"file.ready", "execution.failed"}})
	got = admin.ok("kadu_webhooks_get", map[string]any{"id": id})
	if got["description"] != "Conciliação diária" || fmt.Sprint(got["event_codes"]) != "[file.ready execution.failed]" {
		t.Errorf("after kadu_webhooks_update, kadu_webhooks_get = %v", got)
	}

	// A file confirmed ready is an event the webhook now receives.
	size := len(statementCSV)
	reg := mustREST(t, admin.rest, "POST", "/files", 201,
		fmt.Sprintf(`{"filename":"extrato.csv","content_type":"text/csv","size_bytes":%d}`, size))
	up := reg["upload"].(map[string]any)
	headers, _ := up["headers"].(map[string]any)
	if status, body := upload(t, "PUT", up["url"].(string), headers, []byte(statementCSV), nil); status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	file := reg["file"].(map[string]any)["id"].(string)
	mustREST(t, admin.rest, "POST", "/files/"+file+"/confirm", 200, "")
	first := rcv.next(t)
	evt := first.header.Get("webhook-id")
	if !strings.HasPrefix(evt, "evt_") || !strings.Contains(string(first.body), `"file.ready"`) ||
		!strings.Contains(string(first.body), file) || !first.signedBy(t, secret) {
		t.Fatalf("first delivery: webhook-id %q, body %s, signature %q", evt, first.body, first.header.Get("webhook-signature"))
	}

	var deliveries map[string]any
	toolsWait(t, "the delivery to be logged as succeeded", func() bool {
		deliveries = admin.ok("kadu_webhook_deliveries_list", map[string]any{"webhook_id": id})
		data, _ := deliveries["data"].([]any)
		return len(data) == 1 && data[0].(map[string]any)["status"] == "succeeded"
	})
	d := deliveries["data"].([]any)[0].(map[string]any)
	dlv, _ := d["id"].(string)
	if d["event_id"] != evt || d["event_code"] != "file.ready" || d["attempts_count"] != float64(1) {
		t.Errorf("kadu_webhook_deliveries_list = %v", d)
	}
	one := admin.ok("kadu_webhook_deliveries_get", map[string]any{"id": dlv})
	attempts, _ := one["attempts"].([]any)
	if len(attempts) != 1 || attempts[0].(map[string]any)["response_code"] != float64(200) ||
		attempts[0].(map[string]any)["response_body"] != "recebido" {
		t.Errorf("kadu_webhook_deliveries_get attempts = %v", attempts)
	}

	rotated := admin.ok("kadu_webhooks_rotate_secret", map[string]any{"id": id, "overlap_seconds": 0})
	newSecret, _ := rotated["secret"].(string)
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret || rotated["id"] != id {
		t.Fatalf("kadu_webhooks_rotate_secret = %v", rotated)
	}
	if got := admin.ok("kadu_webhooks_get", map[string]any{"id": id}); strings.Contains(fmt.Sprint(got), "whsec_") {
		t.Errorf("after the rotation kadu_webhooks_get shows a secret: %v", got)
	}

	replayed := admin.ok("kadu_webhook_deliveries_replay", map[string]any{"id": dlv})
	if replayed["id"] != dlv {
		t.Errorf("kadu_webhook_deliveries_replay = %v", replayed)
	}
	again := rcv.next(t)
	if again.header.Get("webhook-id") != evt || !again.signedBy(t, newSecret) || again.signedBy(t, secret) {
		t.Errorf("replay: webhook-id %q (want %s), signature %q: want the new secret's only",
			again.header.Get("webhook-id"), evt, again.header.Get("webhook-signature"))
	}
	// The count and the attempts are two reads (GET /webhook_deliveries/{id}
	// is not one snapshot), so wait for both.
	toolsWait(t, "the replay to be logged", func() bool {
		one = admin.ok("kadu_webhook_deliveries_get", map[string]any{"id": dlv})
		attempts, _ = one["attempts"].([]any)
		return len(attempts) == 2 && one["attempts_count"] == float64(2)
	})
	if last := attempts[1].(map[string]any); last["replay"] != true || last["response_code"] != float64(200) {
		t.Errorf("the replay's attempt = %v", last)
	}

	deleted := admin.ok("kadu_webhooks_delete", map[string]any{"id": id})
	if deleted["id"] != id || deleted["deleted"] != true {
		t.Errorf("kadu_webhooks_delete = %v", deleted)
	}
	admin.fails("kadu_webhooks_get", map[string]any{"id": id}, "not_found")
	if got := ids(admin.ok("kadu_webhooks_list", map[string]any{})); len(got) != 0 {
		t.Errorf("kadu_webhooks_list after the delete = %v", got)
	}
}
