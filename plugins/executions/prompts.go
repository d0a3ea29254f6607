package main

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/kadu/plugins/internal/assist"
	"github.com/kobana/kadu/sdk/go/kadu"
)

// prompts are the execution scripts of docs/reference/mcp.md#resources-prompts-and-completions. Both fetch the list they
// are about as the caller and show it fenced as data: execution output
// and failure messages are never instructions.
var prompts = []kadu.Feature{
	kadu.Prompt{
		Name:  "investigate_failed_executions",
		Title: "Investigate failed executions",
		Description: "Lists the executions that failed (since a date, optionally of one task) and walks through " +
			"what to check for each: the failure code, the steps, the input, the files and the limits.",
		Arguments: []kadu.PromptArgument{
			{Name: "since", Description: "Only failures created at or after this moment: a date (2026-03-01, UTC) " +
				"or an RFC 3339 time (2026-03-01T12:00:00Z). Leave it empty for the most recent failures."},
			{Name: "task_id", Description: "Only the failures of this task (tsk_…). Leave it empty for every task."},
		},
		Access: viewerRead,
		Get:    getInvestigate,
	},
	kadu.Prompt{
		Name:  "review_pending_inputs",
		Title: "Review executions waiting for input",
		Description: "Lists the executions waiting for an answer (status waiting_input) and helps answer each " +
			"question with kadu_executions_continue.",
		Arguments: []kadu.PromptArgument{
			{Name: "task_id", Description: "Only the executions of this task (tsk_…). Leave it empty for every task."},
		},
		Access: memberRun, // answering takes kadu.run
		Get:    getPending,
	},
}

// promptPage is how many executions a prompt shows: enough to act on,
// small enough for a model's context.
const promptPage = 20

func getInvestigate(c *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
	q := url.Values{"status": {"failed"}, "limit": {fmt.Sprint(promptPage)}}
	since := strings.TrimSpace(args["since"])
	if since != "" {
		t, err := parseSince(since)
		if err != nil {
			return nil, kadu.InvalidParams(err.Error(), nil)
		}
		q.Set("created_after", t.Format(time.RFC3339))
	}
	if err := taskFilter(q, args["task_id"]); err != nil {
		return nil, err
	}
	path := "/api/v1/executions?" + q.Encode()
	resp, err := c.API("GET", path, nil)
	if err != nil {
		return nil, err
	}
	if err := resp.Err(); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("Investigate the Kadu executions that failed")
	if since != "" {
		b.WriteString(" since " + since)
	}
	b.WriteString(". The newest are listed below (meta.next_cursor not null means there are more: page with kadu_executions_list).\n\n")
	b.WriteString("For each failure, group them by failure.code and tell me:\n" +
		"1. What failed: failure.code and failure.message, and at which step (kadu_executions_steps_list with its id).\n" +
		"2. What to check, by code:\n" +
		"   - invalid_input: the input against the task's input_schema (kadu_tasks_get), and the input files " +
		"(kadu_files_get: status ready, the right media type).\n" +
		"   - invalid_playbook: the task's playbook against the reference kobana://kadu/playbooks.\n" +
		"   - cost_cap_exceeded: the task's max_cost_cents and the month's usage (kobana://kadu/usage).\n" +
		"   - timeout: the task's timeout_seconds and the step that was running.\n" +
		"   - not_approved: who declined the approval step; nothing is wrong with the task.\n" +
		"   - error: the message, and whether a retry is likely to work.\n" +
		"3. What to do next. Do not run, continue, cancel or delete anything without asking me first.\n\n")
	b.WriteString(assist.Notice + "\n\n")
	b.WriteString(assist.Data("GET "+path, resp.Body))
	return &kadu.PromptResult{Description: "Failed executions", Messages: []kadu.PromptMessage{kadu.UserText(b.String())}}, nil
}

func getPending(c *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
	q := url.Values{"status": {"waiting_input"}, "limit": {fmt.Sprint(promptPage)}}
	if err := taskFilter(q, args["task_id"]); err != nil {
		return nil, err
	}
	path := "/api/v1/executions?" + q.Encode()
	resp, err := c.API("GET", path, nil)
	if err != nil {
		return nil, err
	}
	if err := resp.Err(); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("Review the Kadu executions waiting for my answer, listed below " +
		"(meta.next_cursor not null means there are more: page with kadu_executions_list).\n\n" +
		"For each one, oldest question first:\n" +
		"1. Tell me which task it runs, what pending_input.prompt asks and by when (pending_input.expires_at).\n" +
		"2. Show me what the answer must look like (pending_input.input_schema) and ask me for it; " +
		"do not answer for me.\n" +
		"3. Send my answer with kadu_executions_continue (its id and the answer), then check with kadu_executions_get " +
		"that it went on. If I say to stop it, use kadu_executions_cancel.\n" +
		"If nothing is listed, tell me that no execution is waiting.\n\n")
	b.WriteString(assist.Notice + "\n\n")
	b.WriteString(assist.Data("GET "+path, resp.Body))
	return &kadu.PromptResult{Description: "Executions waiting for input", Messages: []kadu.PromptMessage{kadu.UserText(b.String())}}, nil
}

// taskFilter adds task_id to q when the argument is set.
func taskFilter(q url.Values, taskID string) error {
	if strings.TrimSpace(taskID) == "" {
		return nil
	}
	id, err := assist.ID("task_id", "tsk_", taskID, "kadu_tasks_list")
	if err != nil {
		return kadu.InvalidParams(err.Error(), nil)
	}
	q.Set("task_id", id)
	return nil
}

// parseSince reads since as a date (midnight UTC) or an RFC 3339 time.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("argument since is %q, not a date or time; use 2026-03-01 or 2026-03-01T12:00:00Z", s)
}

// completion suggests execution ids, newest first, for the execution
// templates (docs/reference/mcp.md#resources-prompts-and-completions).
var completion = kadu.Completion{Complete: complete}

func complete(c *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
	if req.Ref.Type != "ref/resource" || req.Argument.Name != "id" ||
		(req.Ref.URI != "kobana://kadu/executions/{id}" && req.Ref.URI != "kobana://kadu/executions/{id}/steps") {
		return kadu.CompleteResult{}, nil
	}
	return assist.Complete(c, "/api/v1/executions", assist.IDPrefix(req.Argument.Value), assist.ItemID)
}
