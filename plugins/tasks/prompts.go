package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/kobana/kadu/plugins/internal/assist"
	"github.com/kobana/kadu/sdk/go/kadu"
)

// runTaskPrompt is run_task (docs/reference/mcp.md#resources-prompts-and-completions): the steps to upload, run and follow
// one task. Only someone who may run tasks is offered it.
var runTaskPrompt = kadu.Prompt{
	Name:  "run_task",
	Title: "Run a task",
	Description: "Walks through running one Kadu task: reading its input schema, uploading the files it needs, " +
		"starting the run, following the execution and answering it if it waits for input.",
	Arguments: []kadu.PromptArgument{
		{Name: "task", Required: true,
			Description: "The task to run: its id (tsk_…) or its exact name. Completion suggests the tasks you can see."},
		{Name: "file_ids",
			Description: "Files already uploaded and ready to give the run, as ids (file_…) separated by commas. " +
				"Leave it empty to be shown how to upload them."},
	},
	Access: memberRun,
	Get:    getRunTask,
}

func getRunTask(c *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
	files, err := assist.IDs("file_ids", "file_", args["file_ids"], "kadu_files_list")
	if err != nil {
		return nil, kadu.InvalidParams(err.Error(), nil)
	}
	id, body, err := findTask(c, args["task"])
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "I want to run the Kadu task %s. Do it step by step, telling me what you do:\n\n", id)
	fmt.Fprintf(&b, "1. Read the task below (or call kadu_tasks_get with id %s). Build the run's input from its "+
		"input_schema and examples; ask me for any value you cannot find.\n", id)
	if len(files) > 0 {
		fmt.Fprintf(&b, "2. Use these files as input_file_ids: %s. Check each with kadu_files_get: its status must be ready.\n",
			strings.Join(files, ", "))
	} else {
		b.WriteString("2. If the task needs files, upload each one: call kadu_files_create with its filename, media type " +
			"and size; I (or my client) then send the exact bytes with upload.method to upload.url with upload.headers; " +
			"then call kadu_files_confirm so that the file is ready. Use their ids as input_file_ids.\n")
	}
	fmt.Fprintf(&b, "3. Call kadu_tasks_run with id %s, the input and the input_file_ids, and an idempotency_key so "+
		"that a retry does not start a second run. It answers at once with the execution (status queued).\n", id)
	b.WriteString("4. Follow the execution with kadu_executions_get until its status is succeeded, failed, cancelled or expired. " +
		"If it is waiting_input, show me pending_input.prompt, ask me for the answer and send it with kadu_executions_continue. " +
		"If a tool asks me to confirm or gives an approval link, wait for my decision.\n")
	b.WriteString("5. Summarise the result for me: the status, the cost, the output's summary and the files it wrote " +
		"(kadu_files_download gives their links). On failure, say what failure.code and failure.message mean.\n\n")
	b.WriteString(assist.Notice + "\n\n")
	b.WriteString(assist.Data("GET /api/v1/tasks/"+id, body))
	return &kadu.PromptResult{
		Description: "Run task " + id,
		Messages:    []kadu.PromptMessage{kadu.UserText(b.String())},
	}, nil
}

// findTask reads the task named by ref, an id or an exact name, as the
// caller; a name two tasks share must be given as an id.
func findTask(c *kadu.Call, ref string) (string, []byte, error) {
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "tsk_") {
		var list struct {
			Data []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"data"`
		}
		if err := c.Do("GET", "/api/v1/tasks?limit=100&q="+url.QueryEscape(ref), nil, &list); err != nil {
			return "", nil, err
		}
		var ids []string
		for _, t := range list.Data {
			if strings.EqualFold(strings.TrimSpace(t.Name), ref) {
				ids = append(ids, t.ID)
			}
		}
		switch len(ids) {
		case 0:
			return "", nil, kadu.InvalidParams(fmt.Sprintf("argument task: no task you can see is named %q; "+
				"give its id (tsk_…) or its exact name, as kadu_tasks_list shows them", ref), nil)
		case 1:
			ref = ids[0]
		default:
			return "", nil, kadu.InvalidParams(fmt.Sprintf("argument task: %d tasks are named %q (%s); give the id of the one to run",
				len(ids), ref, strings.Join(ids, ", ")), nil)
		}
	}
	id, err := assist.ID("task", "tsk_", ref, "kadu_tasks_list")
	if err != nil {
		return "", nil, kadu.InvalidParams(err.Error(), nil)
	}
	resp, err := c.API("GET", "/api/v1/tasks/"+id, nil)
	if err != nil {
		return "", nil, err
	}
	if resp.Status == 404 {
		return "", nil, kadu.InvalidParams(fmt.Sprintf("argument task: task %s was not found in your organisation; "+
			"take an id from kadu_tasks_list", id), nil)
	}
	if err := resp.Err(); err != nil {
		return "", nil, err
	}
	if !json.Valid(resp.Body) {
		return "", nil, fmt.Errorf("GET /api/v1/tasks/%s answered something that is not JSON", id)
	}
	return id, resp.Body, nil
}

// completion suggests tasks: for the template's id and for a name-less
// prefix, the ids; for run_task's task, the names too (docs/reference/mcp.md#resources-prompts-and-completions).
var completion = kadu.Completion{Complete: complete}

func complete(c *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
	typed := strings.TrimSpace(req.Argument.Value)
	switch {
	case req.Ref.Type == "ref/resource" && req.Ref.URI == "kobana://kadu/tasks/{id}" && req.Argument.Name == "id",
		req.Ref.Type == "ref/prompt" && req.Ref.Name == "run_task" && req.Argument.Name == "task" &&
			strings.HasPrefix(strings.ToLower(typed), "tsk_"):
		return assist.Complete(c, "/api/v1/tasks", assist.IDPrefix(typed), assist.ItemID)
	case req.Ref.Type == "ref/prompt" && req.Ref.Name == "run_task" && req.Argument.Name == "task":
		path, lower := "/api/v1/tasks", strings.ToLower(typed)
		if typed != "" {
			path += "?q=" + url.QueryEscape(typed)
		}
		// q also matches descriptions: keep the names that contain what was typed.
		return assist.Complete(c, path,
			func(it assist.Item) bool { return strings.Contains(strings.ToLower(it.Name), lower) },
			func(it assist.Item) string { return it.Name })
	}
	return kadu.CompleteResult{}, nil
}
