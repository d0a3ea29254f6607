package main

import (
	"fmt"
	"strings"

	"github.com/kobana/kadu/plugins/internal/assist"
	"github.com/kobana/kadu/sdk/go/kadu"
)

// memberRun is who may start a run: reconciling means running a task.
var memberRun = kadu.Access{MinRole: kadu.RoleMember, Scope: kadu.ScopeRun}

// reconcilePrompt is reconcile_statement (docs/reference/mcp.md#resources-prompts-and-completions): reconcile a bank
// statement against the receivables, both uploaded files.
var reconcilePrompt = kadu.Prompt{
	Name:  "reconcile_statement",
	Title: "Reconcile a bank statement",
	Description: "Reconciles an uploaded bank statement with an uploaded list of receivables by running the " +
		"organisation's reconciliation task, then reports what matched and what did not.",
	Arguments: []kadu.PromptArgument{
		{Name: "statement_file", Required: true,
			Description: "The bank statement (OFX or CSV), an uploaded file's id (file_…). Completion suggests your files."},
		{Name: "receivables_file", Required: true,
			Description: "The receivables to match (CSV or JSON), an uploaded file's id (file_…). Completion suggests your files."},
	},
	Access: memberRun,
	Get:    getReconcile,
}

func getReconcile(c *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
	statement, statementJSON, err := fileMeta(c, "statement_file", args["statement_file"])
	if err != nil {
		return nil, err
	}
	receivables, receivablesJSON, err := fileMeta(c, "receivables_file", args["receivables_file"])
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Reconcile my bank statement (file %s) with my receivables (file %s) in Kadu:\n\n", statement, receivables)
	b.WriteString("1. Check that both files below have status ready; if not, tell me to finish the upload " +
		"(kadu_files_create, the upload, then kadu_files_confirm).\n" +
		"2. Find the task that reconciles uploaded files: kadu_tasks_list with q \"arquivos enviados\" (every " +
		"organisation starts with the example task \"Conciliação de arquivos enviados\"), else with q \"concilia\" " +
		"or \"reconcil\"; then kadu_tasks_get. Its playbook must read the statement and the receivables from input " +
		"files: a parse_statement and a reconcile step whose source is file_index, file_name or file_id_pointer " +
		"(kobana://kadu/playbooks explains them); a task whose input_schema asks for the statement's text does not " +
		"read files. If there are several such tasks, or none, ask me.\n" +
		"3. Run it with kadu_tasks_run: input_file_ids in the order its playbook reads them (file_index; the " +
		"example task reads [statement, receivables]), input built from its input_schema (the example task's is " +
		"empty: {}), and an idempotency_key.\n" +
		"4. Follow the execution with kadu_executions_get; answer any waiting_input question with me " +
		"(kadu_executions_continue) and wait for my decision on any approval.\n" +
		"5. Report: how many entries matched, which did not (on either side), the totals, the cost, and " +
		"the files the run wrote (kadu_files_download).\n\n")
	b.WriteString(assist.Notice + "\n\n")
	b.WriteString(assist.Data("GET /api/v1/files/"+statement, statementJSON))
	b.WriteString("\n\n")
	b.WriteString(assist.Data("GET /api/v1/files/"+receivables, receivablesJSON))
	return &kadu.PromptResult{Description: "Reconcile a bank statement",
		Messages: []kadu.PromptMessage{kadu.UserText(b.String())}}, nil
}

// fileMeta reads the metadata (never the bytes) of the file the argument
// names, as the caller.
func fileMeta(c *kadu.Call, arg, value string) (string, []byte, error) {
	id, err := assist.ID(arg, "file_", value, "kadu_files_list")
	if err != nil {
		return "", nil, kadu.InvalidParams(err.Error(), nil)
	}
	resp, err := c.API("GET", "/api/v1/files/"+id, nil)
	if err != nil {
		return "", nil, err
	}
	if resp.Status == 404 {
		return "", nil, kadu.InvalidParams(fmt.Sprintf("argument %s: file %s was not found in your organisation; "+
			"take an id from kadu_files_list", arg, id), nil)
	}
	if err := resp.Err(); err != nil {
		return "", nil, err
	}
	return id, resp.Body, nil
}

// completion suggests file ids, newest first, for the file template and
// the reconcile_statement arguments (docs/reference/mcp.md#resources-prompts-and-completions).
var completion = kadu.Completion{Complete: complete}

func complete(c *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
	switch {
	case req.Ref.Type == "ref/resource" && req.Ref.URI == "kobana://kadu/files/{id}" && req.Argument.Name == "id",
		req.Ref.Type == "ref/prompt" && req.Ref.Name == "reconcile_statement" &&
			(req.Argument.Name == "statement_file" || req.Argument.Name == "receivables_file"):
		return assist.Complete(c, "/api/v1/files", assist.IDPrefix(req.Argument.Value), assist.ItemID)
	}
	return kadu.CompleteResult{}, nil
}
