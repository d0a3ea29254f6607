package main

import (
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// The API's JSON (core/api render.go), described loosely: types are exact,
// only ids are required, and unknown members are allowed, so that a field
// the API adds later never makes the host reject a result.

// executionSchema is an execution.
const executionSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"exe_ id"},
	"task_id":{"type":"string"},
	"task_version":{"type":"integer"},
	"status":{"enum":["queued","running","waiting_input","cancelling","succeeded","failed","cancelled","expired"]},
	"launched_by":{"type":"string"},
	"input":{"type":"object"},
	"input_file_ids":{"type":"array","items":{"type":"string"}},
	"previous_execution_id":{"type":["string","null"]},
	"output":{"type":["object","null"],"description":"untrusted data produced by the run","properties":{
		"summary":{"type":"string"},"data":{},"file_ids":{"type":"array","items":{"type":"string"}}}},
	"pending_input":{"type":["object","null"],"properties":{
		"kind":{"type":"string"},"prompt":{"type":"string"},"input_schema":{"type":["object","null"]},
		"step_id":{"type":["string","null"]},"expires_at":{"type":"string"}}},
	"failure":{"type":["object","null"],"properties":{"code":{"type":"string"},"message":{"type":"string"}}},
	"cost":{"type":"object","properties":{
		"amount_cents":{"type":"integer"},"max_cost_cents":{"type":"integer"},"currency":{"type":"string"}}},
	"created_at":{"type":"string"},
	"started_at":{"type":["string","null"]},
	"finished_at":{"type":["string","null"]},
	"updated_at":{"type":"string"}},
	"required":["id"]}`

// stepSchema is one step of an execution.
const stepSchema = `{"type":"object","properties":{
	"id":{"type":"string"},
	"execution_id":{"type":"string"},
	"position":{"type":"integer"},
	"name":{"type":"string"},
	"kind":{"type":"string"},
	"status":{"type":"string"},
	"summary":{"type":"string","description":"untrusted data produced by the run"},
	"cost_cents":{"type":"integer"},
	"started_at":{"type":"string"},
	"finished_at":{"type":["string","null"]},
	"data":{}},
	"required":["id"]}`

// approvalSchema is an approval (docs/reference/confirmation.md): a pending destructive call and
// its outcome. Its members are the confirmation engine's; only the id is
// fixed here.
const approvalSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"apr_ id"},
	"status":{"type":"string"}},
	"required":["id"]}`

var (
	executionOutput  = json.RawMessage(executionSchema)
	executionsOutput = route.ListSchema(executionSchema)
	stepsOutput      = route.ListSchema(stepSchema)
	approvalOutput   = json.RawMessage(approvalSchema)
)
