package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// uploadReady registers name with content, PUTs it to the signed URL and
// confirms it; it returns the file's id, ready.
func uploadReady(t *testing.T, c restClient, name, contentType, content string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	status, _, f := c.do("POST", "/files", fmt.Sprintf(`{"filename":%q,"content_type":%q,"size_bytes":%d,"sha256":%q}`,
		name, contentType, len(content), hex.EncodeToString(sum[:])))
	if status != 201 {
		t.Fatalf("POST /files %s: %d %v", name, status, f)
	}
	up := f["upload"].(map[string]any)
	headers, _ := up["headers"].(map[string]any)
	if code, body := upload(t, "PUT", up["url"].(string), headers, []byte(content), nil); code/100 != 2 {
		t.Fatalf("PUT %s: %d %s", name, code, body)
	}
	id := f["file"].(map[string]any)["id"].(string)
	if status, _, ready := c.do("POST", "/files/"+id+"/confirm", ""); status != 200 || ready["status"] != "ready" {
		t.Fatalf("confirm %s: %d %v", name, status, ready)
	}
	return id
}

// TestReconcilePromptLeadsToTheFileTask does what a client does with the
// reconcile_statement prompt, through the real bundles: a member uploads a
// statement and receivables, gets the prompt, searches tasks with the
// query it names, and runs the one it finds with both files — which
// succeeds (no 422: the example task reads files and wants no input).
func TestReconcilePromptLeadsToTheFileTask(t *testing.T) {
	fx := newToolsFixture(t, config.DriverSQLite)
	member := fx.as(t, TokenOptions{OrgID: "org_reconcile_prompt", Role: "member", Subject: "member-r",
		Scopes: []string{"kadu.read", "kadu.write", "kadu.run"}})
	var ids []string
	for _, f := range exampleFilesForTest(t) {
		ids = append(ids, uploadReady(t, member.rest, f[0], f[1], f[2]))
	}

	text := promptText(member, "reconcile_statement", map[string]string{"statement_file": ids[0], "receivables_file": ids[1]})
	m := regexp.MustCompile(`kadu_tasks_list with q "([^"]+)"`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("reconcile_statement names no task search:\n%s", text)
	}
	list := member.ok("kadu_tasks_list", map[string]any{"q": m[1]})
	data, _ := list["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("kadu_tasks_list q=%q = %v; want exactly the example task that reads files", m[1], list)
	}
	task := data[0].(map[string]any)
	if task["name"] != "Conciliação de arquivos enviados" {
		t.Fatalf("the prompt's search finds %v", task["name"])
	}
	exe := member.ok("kadu_tasks_run", map[string]any{"id": task["id"], "input": map[string]any{},
		"input_file_ids": ids, "idempotency_key": "reconcile-prompt"})
	done := member.rest.waitExecution(exe["id"].(string))
	if done["status"] != "succeeded" {
		t.Fatalf("execution %v: %v", done["status"], done["failure"])
	}
	recon, _ := done["output"].(map[string]any)["data"].(map[string]any)["reconciliation"].(map[string]any)
	counts, _ := recon["counts"].(map[string]any)
	if counts["matched"] != 3.0 || counts["unmatched_receivables"] != 1.0 || counts["unexpected_credits"] != 1.0 {
		t.Errorf("reconciliation counts = %v, want 3 matched, 1 unmatched, 1 unexpected", counts)
	}
}

// exampleFilesForTest are the files guide's two files (name, type,
// content), the ones the example task's own example runs on.
func exampleFilesForTest(t *testing.T) [][3]string {
	files, _ := guideParts(t)
	return [][3]string{
		{"extrato.csv", "text/csv", files["extrato.csv"]},
		{"recebiveis.csv", "text/csv", files["recebiveis.csv"]},
	}
}
