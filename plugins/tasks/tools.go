package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// Hints of docs/reference/bundles.md#tool-catalogue (openWorldHint is always false).
var (
	readOnly           = &kadu.Annotations{ReadOnly: true, Idempotent: true}
	write              = &kadu.Annotations{}
	idempotentWrite    = &kadu.Annotations{Idempotent: true}
	destructive        = &kadu.Annotations{Destructive: true}
	destructiveRepeats = &kadu.Annotations{Destructive: true, Idempotent: true}
)

// Access of docs/reference/rest.md#routes.
var (
	viewerRead  = kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead}
	memberRun   = kadu.Access{MinRole: kadu.RoleMember, Scope: kadu.ScopeRun}
	adminWrite  = kadu.Access{MinRole: kadu.RoleAdmin, Scope: kadu.ScopeWrite}
	adminAdmin  = kadu.Access{MinRole: kadu.RoleAdmin, Scope: kadu.ScopeAdmin}
	taskID      = route.ID("id", "tsk_", "The task's id, from kadu_tasks_list")
	webhookItem = `{"type":"object","properties":{` +
		`"type":{"const":"webhook"},` +
		`"webhook_id":{"type":"string","pattern":"^whk_[0-9a-f]{32}$","description":"A webhook's id, from kadu_webhooks_list."}},` +
		`"required":["type","webhook_id"],"additionalProperties":false}`
)

// Properties a task's create and update share.
var (
	nameProp = kadu.Property{Name: "name", Schema: `{"type":"string","minLength":1,"maxLength":200,` +
		`"description":"Short name people recognise, e.g. \"Conciliação diária\"."}`}
	descriptionProp = kadu.Property{Name: "description", Schema: `{"type":"string","maxLength":2000,` +
		`"description":"What the task is for, in a sentence or two."}`}
	instructionsProp = kadu.Property{Name: "instructions", Schema: `{"type":"string","maxLength":50000,` +
		`"description":"Instructions for the agent that runs the task."}`}
	inputSchemaProp = kadu.Property{Name: "input_schema", Schema: `{"type":"object",` +
		`"description":"JSON Schema (draft 2020-12) of the input each run takes; \"type\" must be \"object\". Add \"examples\" so that people and models know what to send."}`}
	playbookProp = kadu.Property{Name: "playbook", Schema: `{"type":["object","array"],` +
		`"description":"The steps the built-in runner executes, {\"version\":1,\"steps\":[…]} (see the resource kobana://kadu/playbooks)."}`}
	maxCostProp = kadu.Property{Name: "max_cost_cents", Schema: `{"type":"integer","minimum":1,` +
		`"description":"Most one run may cost, in centavos (BRL). At most the plan's per-execution maximum, which is also the default."}`}
	timeoutProp = kadu.Property{Name: "timeout_seconds", Schema: `{"type":"integer","minimum":1,"maximum":86400,` +
		`"description":"How long one run may take before it fails, in seconds (default 900)."}`}
	rolesProp = kadu.Property{Name: "roles", Schema: `{"type":"array","maxItems":3,"uniqueItems":true,` +
		`"items":{"enum":["member","admin","owner"]},"description":"Roles whose members may run the task. Viewers can never run tasks."}`}
	userIDsProp = kadu.Property{Name: "user_ids", Schema: `{"type":"array","maxItems":100,"uniqueItems":true,` +
		`"items":{"type":"string","minLength":1,"maxLength":255},"description":"Users (token subjects) who may run the task whatever their role."}`}
	destinationsProp = kadu.Property{Name: "destinations", Schema: `{"type":"array","maxItems":10,"items":` + webhookItem +
		`,"description":"Webhooks that receive the task's execution events. [] for none."}`}
)

// tools are the tasks group of docs/reference/bundles.md#tool-catalogue, and kadu_usage_get.
var tools = []route.Spec{
	{
		Name:  "kadu_tasks_list",
		Title: "List tasks",
		Description: "Lists the organisation's tasks, newest first, optionally searching names and descriptions with q. " +
			"Use it to find the id of a task before getting or running it. Returns {\"data\":[task…],\"meta\":{\"next_cursor\",\"limit\"}}; " +
			"when next_cursor is not null, call again with cursor set to it for the next page.",
		Route: "GET /api/v1/tasks",
		InputSchema: kadu.ObjectSchema(
			kadu.Property{Name: "q", Schema: `{"type":"string","maxLength":200,"description":"Text to look for in names and descriptions."}`},
			route.Limit, route.Cursor),
		OutputSchema: tasksOutput,
		Annotations:  readOnly,
		Access:       viewerRead,
	},
	{
		Name:  "kadu_tasks_get",
		Title: "Get a task",
		Description: "Gets one task: its instructions, the input_schema (with examples) a run must match, its playbook, " +
			"launch policy, destinations, cost cap and timeout. Read it before kadu_tasks_run to build a valid input.",
		Route:        "GET /api/v1/tasks/{id}",
		InputSchema:  kadu.ObjectSchema(taskID),
		OutputSchema: taskOutput,
		Annotations:  readOnly,
		Access:       viewerRead,
	},
	{
		Name:  "kadu_tasks_create",
		Title: "Create a task",
		Description: "Creates a task (admins only). Only name is required; input_schema defaults to any object, " +
			"max_cost_cents to the plan's per-execution maximum, timeout_seconds to 900. Returns the new task with its id. " +
			"Pass an idempotency_key so that a retry does not create it twice.",
		Route: "POST /api/v1/tasks",
		InputSchema: kadu.ObjectSchema(
			kadu.Property{Name: nameProp.Name, Schema: nameProp.Schema, Required: true},
			descriptionProp, instructionsProp, inputSchemaProp, playbookProp,
			kadu.Property{Name: "launch_policy", Schema: `{"type":"object","properties":{` +
				`"roles":` + rolesProp.Schema + `,"user_ids":` + userIDsProp.Schema + `},"additionalProperties":false,` +
				`"description":"Who may run the task besides admins and owners: members with one of roles, or one of user_ids. Both empty (the default): every member."}`},
			destinationsProp, maxCostProp, timeoutProp, route.IdempotencyKey),
		OutputSchema: taskOutput,
		Annotations:  write,
		Access:       adminAdmin,
	},
	{
		Name:  "kadu_tasks_update",
		Title: "Edit a task",
		Description: "Changes a task's name, description, instructions, input_schema, playbook, max_cost_cents or timeout_seconds " +
			"(give only the fields to change). Runs already started keep the version they started with. " +
			"To change who may run it or where results go, use kadu_tasks_set_launch_policy or kadu_tasks_set_destinations. Returns the updated task.",
		Route: "PATCH /api/v1/tasks/{id}",
		InputSchema: kadu.ObjectSchema(taskID, nameProp, descriptionProp, instructionsProp, inputSchemaProp, playbookProp,
			maxCostProp, timeoutProp, route.IdempotencyKey),
		OutputSchema: taskOutput,
		Annotations:  idempotentWrite,
		Access:       adminWrite,
	},
	{
		Name:  "kadu_tasks_delete",
		Title: "Delete a task",
		Description: "Deletes a task: it disappears from lists and can no longer be run; executions already running finish. " +
			"The person is asked to confirm first. Returns {\"id\",\"deleted\":true}.",
		Route:       "DELETE /api/v1/tasks/{id}",
		InputSchema: kadu.ObjectSchema(taskID, route.IdempotencyKey),
		Annotations: destructiveRepeats,
		Access:      adminAdmin,
	},
	{
		Name:  "kadu_tasks_set_launch_policy",
		Title: "Set who may run a task",
		Description: "Replaces the task's launch policy, which says who may run it: admins and owners always may; when roles and " +
			"user_ids are both empty every member may; otherwise only members with one of roles and the users in user_ids. " +
			"Send both lists in full (a missing list is empty). The person is asked to confirm first. Returns the updated task.",
		Route:       "PUT /api/v1/tasks/{id}/launch_policy",
		InputSchema: kadu.ObjectSchema(taskID, rolesProp, userIDsProp, route.IdempotencyKey),
		Annotations: destructiveRepeats,
		Access:      adminAdmin,
	},
	{
		Name:  "kadu_tasks_set_destinations",
		Title: "Set where a task's results go",
		Description: "Replaces the webhooks that receive the task's execution events (the full list; [] for none). " +
			"This changes where the organisation's data is sent, so the person is asked to confirm first. Returns the updated task.",
		Route: "PUT /api/v1/tasks/{id}/destinations",
		InputSchema: kadu.ObjectSchema(taskID,
			kadu.Property{Name: destinationsProp.Name, Schema: destinationsProp.Schema, Required: true},
			route.IdempotencyKey),
		Annotations: destructiveRepeats,
		Access:      adminAdmin,
	},
	{
		Name:  "kadu_tasks_run",
		Title: "Run a task",
		Description: "Starts one execution of a task with input (an object matching the task's input_schema; see kadu_tasks_get) " +
			"and optionally input_file_ids (files uploaded with kadu_files_create and confirmed ready). It only enqueues the run and " +
			"answers at once with the execution (status queued); follow it with kadu_executions_get. Each call starts another " +
			"execution that costs money: pass an idempotency_key so that a retry does not run it twice. The person is asked to confirm first. " +
			"Fails with cost_cap_exceeded or plan_limit_exceeded when the month's budget does not allow it.",
		Route: "POST /api/v1/tasks/{id}/run",
		InputSchema: kadu.ObjectSchema(taskID,
			kadu.Property{Name: "input", Schema: `{"type":"object","description":"The run's input, valid against the task's input_schema. Default {}."}`},
			kadu.Property{Name: "input_file_ids", Schema: `{"type":"array","maxItems":20,"uniqueItems":true,` +
				`"items":{"type":"string","pattern":"^file_[0-9a-f]{32}$"},"description":"Ready input files (file_…) the run reads."}`},
			route.IdempotencyKey),
		Annotations: destructive,
		Access:      memberRun,
	},
	{
		Name:  "kadu_usage_get",
		Title: "Get usage and limits",
		Description: "Gets the organisation's plan, its limits, what has been spent and launched this month (UTC), what remains " +
			"of the monthly cost cap, the executions running now, and when the month resets. Money is in centavos (BRL). " +
			"Check it before launching costly runs, or to explain a cost_cap_exceeded or plan_limit_exceeded error.",
		Route:        "GET /api/v1/usage",
		InputSchema:  kadu.ObjectSchema(),
		OutputSchema: usageOutput,
		Annotations:  readOnly,
		Access:       viewerRead,
	},
}

// resources are the task documents of docs/reference/mcp.md#resources-prompts-and-completions.
var resources = []kadu.Feature{
	route.Resource(route.ResourceSpec{
		URI: "kobana://kadu/tasks/{id}", Name: "task", Title: "Task",
		Description: "A task as JSON: instructions, input_schema, playbook, launch policy, destinations.",
		Route:       "GET /api/v1/tasks/{id}", Access: viewerRead,
	}),
	route.Resource(route.ResourceSpec{
		URI: "kobana://kadu/usage", Name: "usage", Title: "Usage and limits",
		Description: "The organisation's plan, limits and this month's usage, as JSON.",
		Route:       "GET /api/v1/usage", Access: viewerRead,
	}),
}
