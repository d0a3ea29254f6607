package main

import (
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// The API's JSON (core/api files.go), described loosely: types are exact,
// only ids are required, and unknown members are allowed, so that a field
// the API adds later never makes the host reject a result.

// fileSchema is a file's metadata.
const fileSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"file_ id"},
	"filename":{"type":"string","description":"as uploaded: untrusted"},
	"content_type":{"type":"string"},
	"size_bytes":{"type":"integer"},
	"sha256":{"type":["string","null"]},
	"purpose":{"enum":["input","output"]},
	"status":{"enum":["pending_upload","ready","rejected","expired"]},
	"rejected_reason":{"type":["string","null"]},
	"execution_id":{"type":["string","null"]},
	"created_at":{"type":"string"},
	"expires_at":{"type":["string","null"]}},
	"required":["id"]}`

// createdSchema is POST /files: the file and where to upload it.
const createdSchema = `{"type":"object","properties":{
	"file":` + fileSchema + `,
	"upload":{"type":"object","properties":{
		"url":{"type":"string"},
		"method":{"type":"string"},
		"headers":{"type":"object","additionalProperties":{"type":"string"}},
		"expires_at":{"type":"string"}},
		"required":["url","method"]}},
	"required":["file","upload"]}`

// downloadSchema is GET /files/{id}/download.
const downloadSchema = `{"type":"object","properties":{
	"url":{"type":"string"},
	"expires_at":{"type":"string"}},
	"required":["url"]}`

var (
	fileOutput     = json.RawMessage(fileSchema)
	filesOutput    = route.ListSchema(fileSchema)
	createdOutput  = json.RawMessage(createdSchema)
	downloadOutput = json.RawMessage(downloadSchema)
)
