package plugin

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// executionOutputSchema is the outputSchema of kadu_executions_get
// (plugins/executions/schemas.go), a realistic one: typed members, enums,
// nullable objects.
const executionOutputSchema = `{"type":"object","properties":{
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

// executionJSON is a succeeded execution as the API renders it.
const executionJSON = `{"id":"exe_01J9ZQ4V8K6T3M2N1P0R5S7W9X","task_id":"tsk_01J9ZQ3A2B4C6D8E0F1G3H5J7K",` +
	`"task_version":3,"status":"succeeded","launched_by":"user-org_bench","input":{"customer":"ACME","limit":10,` +
	`"tags":["a","b"]},"input_file_ids":[],"previous_execution_id":null,"output":{"summary":"Sent 10 reminders",` +
	`"data":{"sent":10,"failed":0,"ids":["r1","r2","r3"]},"file_ids":[]},"pending_input":null,"failure":null,` +
	`"cost":{"amount_cents":12,"max_cost_cents":500,"currency":"USD"},"created_at":"2026-07-28T12:00:00Z",` +
	`"started_at":"2026-07-28T12:00:01Z","finished_at":"2026-07-28T12:00:04Z","updated_at":"2026-07-28T12:00:04Z"}`

// BenchmarkOutputSchema measures checking a tool's structuredContent
// against its outputSchema, what every successful call of a tool that
// declares one pays on the host.
func BenchmarkOutputSchema(b *testing.B) {
	s, err := compileToolSchema(json.RawMessage(executionOutputSchema))
	if err != nil {
		b.Fatal(err)
	}
	doc := json.RawMessage(executionJSON)
	b.Run("host", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if err := s.validate(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same check with the library's own decoder, as the host did
	// before decodeValue: the difference is what decodeValue saves.
	b.Run("jsonschema-decoder", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.s.Validate(inst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
