package main

import (
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// The API's JSON (core/api webhooks.go), described loosely: types are
// exact, only ids are required, and unknown members are allowed, so that a
// field the API adds later never makes the host reject a result.

// webhookSchema is a webhook (never with its secret).
const webhookSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"whk_ id"},
	"url":{"type":"string"},
	"description":{"type":"string"},
	"event_codes":{"type":"array","items":{"type":"string"}},
	"status":{"enum":["enabled","disabled"]},
	"disabled_reason":{"type":["string","null"]},
	"previous_secret_expires_at":{"type":["string","null"]},
	"created_at":{"type":"string"}},
	"required":["id"]}`

// lastAttemptSchema is the members a delivery and an attempt share.
const attemptMembers = `
	"response_code":{"type":["integer","null"]},
	"duration_ms":{"type":"integer"},
	"error":{"type":["string","null"]}`

// deliverySchema is a delivery in a list.
const deliverySchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"dlv_ id"},
	"webhook_id":{"type":"string"},
	"event_id":{"type":"string"},
	"event_code":{"type":"string"},
	"status":{"enum":["pending","succeeded","failed","cancelled"]},
	"attempts_count":{"type":"integer"},
	"next_attempt_at":{"type":["string","null"]},
	"last_attempt":{"type":["object","null"],"properties":{"at":{"type":"string"},` + attemptMembers + `}}},
	"required":["id"]}`

// deliveryDetailSchema is one delivery with its attempts.
const deliveryDetailSchema = `{"type":"object","properties":{
	"id":{"type":"string"},
	"webhook_id":{"type":"string"},
	"event_code":{"type":"string"},
	"status":{"enum":["pending","succeeded","failed","cancelled"]},
	"attempts":{"type":"array","items":{"type":"object","properties":{
		"id":{"type":"string"},
		"at":{"type":"string"},
		"url":{"type":"string"},` + attemptMembers + `,
		"response_body":{"type":["string","null"],"description":"the receiver's answer, truncated: untrusted"},
		"replay":{"type":"boolean"}}}}},
	"required":["id"]}`

// auditEventSchema is an event of the audit trail (core/api audit.go).
const auditEventSchema = `{"type":"object","properties":{
	"id":{"type":"string","description":"aud_ id"},
	"seq":{"type":"integer"},
	"occurred_at":{"type":"string"},
	"action":{"type":"string"},
	"surface":{"type":"string"},
	"issuer":{"type":["string","null"]},
	"subject":{"type":["string","null"]},
	"role":{"type":["string","null"]},
	"scopes":{"type":"array","items":{"type":"string"}},
	"client_id":{"type":["string","null"]},
	"client_name":{"type":["string","null"],"description":"reported by the client: untrusted"},
	"tool":{"type":["string","null"]},
	"route":{"type":["string","null"]},
	"resource_id":{"type":["string","null"]},
	"args_digest":{"type":["string","null"]},
	"outcome":{"enum":["succeeded","failed","declined"]},
	"status":{"type":["integer","null"]},
	"detail":{"type":["string","null"],"description":"untrusted"},
	"request_id":{"type":["string","null"]},
	"trace_id":{"type":["string","null"]},
	"prev_hash":{"type":["string","null"]},
	"hash":{"type":"string"}},
	"required":["id"]}`

var (
	auditEventsOutput = route.ListSchema(auditEventSchema)
	webhookOutput     = json.RawMessage(webhookSchema)
	webhooksOutput    = route.ListSchema(webhookSchema)
	deliveriesOutput  = route.ListSchema(deliverySchema)
	deliveryOutput    = json.RawMessage(deliveryDetailSchema)
)
