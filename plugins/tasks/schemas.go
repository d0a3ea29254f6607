package main

import (
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// The API's JSON (core/api render.go, usage.go), described loosely: types
// are exact, only ids are required, and unknown members are allowed, so
// that a field the API adds later never makes the host reject a result.

// taskSchema is a task.
const taskSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"tsk_ id"},
	"name":{"type":"string"},
	"description":{"type":"string"},
	"instructions":{"type":"string"},
	"input_schema":{"type":["object","null"],"description":"JSON Schema of the input kadu_tasks_run expects"},
	"playbook":{"type":["object","array","null"],"description":"the steps the built-in runner executes"},
	"launch_policy":{"type":"object","properties":{
		"roles":{"type":"array","items":{"type":"string"}},
		"user_ids":{"type":"array","items":{"type":"string"}}}},
	"destinations":{"type":"array","items":{"type":"object","properties":{
		"type":{"type":"string"},"webhook_id":{"type":"string"}}}},
	"max_cost_cents":{"type":"integer"},
	"timeout_seconds":{"type":"integer"},
	"version":{"type":"integer"},
	"created_at":{"type":"string"},
	"updated_at":{"type":"string"}},
	"required":["id"]}`

// usageSchema is GET /usage.
const usageSchema = `{"type":"object","properties":{
	"plan":{"type":"string"},
	"limits":{"type":"object","properties":{
		"concurrent_executions":{"type":"integer"},
		"executions_per_month":{"type":"integer"},
		"cost_cap_cents":{"type":"integer"},
		"max_cost_per_execution_cents":{"type":"integer"},
		"max_file_size_bytes":{"type":"integer"},
		"retention_seconds":{"type":"integer"},
		"webhooks":{"type":"integer"},
		"requests_per_minute":{"type":"integer"}}},
	"cost_cap_cents":{"type":"integer"},
	"month_to_date":{"type":"object","properties":{"cost_cents":{"type":"integer"},"executions":{"type":"integer"}}},
	"remaining":{"type":"object","properties":{"cost_cents":{"type":"integer"},"executions":{"type":"integer"}}},
	"active_executions":{"type":"integer"},
	"currency":{"type":"string"},
	"period_start":{"type":"string"},
	"resets_at":{"type":"string"}},
	"required":["plan"]}`

var (
	taskOutput  = json.RawMessage(taskSchema)
	tasksOutput = route.ListSchema(taskSchema)
	usageOutput = json.RawMessage(usageSchema)
)
