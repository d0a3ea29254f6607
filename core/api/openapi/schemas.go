package openapi

import (
	"maps"
	"slices"
)

// schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as a
// JSON value.
type schema = map[string]any

// Schemas of the bodies core/api reads and writes, written once here
// beside the route table that names them. The answers are strict: every
// member core/api renders is required (it renders absent values as null
// and empty lists as []) and no other member is allowed, so that a handler
// whose answer changes shape fails core/api's tests until this file says
// the same. Requests allow what the handlers accept.

var (
	str       = schema{"type": "string"}
	integer   = schema{"type": "integer"}
	boolean   = schema{"type": "boolean"}
	timestamp = schema{"type": "string", "format": "date-time",
		"description": "RFC 3339, UTC, with microseconds"}
	anyJSON = schema{"description": "any JSON value"}
)

// id is the id of a resource: its prefix and 32 hex digits.
func id(prefix string) schema {
	return schema{"type": "string", "pattern": "^" + prefix + "[0-9a-f]{32}$"}
}

// orNull is s or null.
func orNull(s schema) schema {
	if t, ok := s["type"].(string); ok {
		out := maps.Clone(s)
		out["type"] = []string{t, "null"}
		return out
	}
	return schema{"anyOf": []any{s, schema{"type": "null"}}}
}

func enum(values ...string) schema { return schema{"type": "string", "enum": values} }

func arrayOf(items schema) schema { return schema{"type": "array", "items": items} }

func ref(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }

// answer is an object whose members are exactly props, all present.
func answer(props map[string]schema) schema {
	return schema{"type": "object", "properties": props,
		"required": slices.Sorted(maps.Keys(props)), "additionalProperties": false}
}

// with returns props and more, as a new map.
func with(props map[string]schema, more map[string]schema) map[string]schema {
	out := make(map[string]schema, len(props)+len(more))
	maps.Copy(out, props)
	maps.Copy(out, more)
	return out
}

// request is an object of optional members props (besides required ones),
// with the idempotency_key every write accepts.
func request(props map[string]schema, required ...string) schema {
	props = with(props, map[string]schema{"idempotency_key": schema{"type": "string", "minLength": 1, "maxLength": 255,
		"description": "Makes the write safe to retry: the same key and body within 24 hours get the stored answer instead of acting twice (or send the Idempotency-Key header)."}})
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// list is a page of items.
func list(item string) schema {
	return answer(map[string]schema{
		"data": arrayOf(ref(item)),
		"meta": answer(map[string]schema{
			"next_cursor": orNull(schema{"type": "string", "description": "pass as cursor for the next page; null on the last"}),
			"limit":       integer,
		}),
	})
}

var (
	taskProps = map[string]schema{
		"id":              id("tsk_"),
		"name":            str,
		"description":     str,
		"instructions":    str,
		"input_schema":    orNull(schema{"type": "object", "description": "JSON Schema of the input a run takes"}),
		"playbook":        schema{"type": []string{"object", "array", "null"}, "description": "the steps the built-in runner executes"},
		"launch_policy":   ref("LaunchPolicyValue"),
		"destinations":    arrayOf(ref("Destination")),
		"max_cost_cents":  integer,
		"timeout_seconds": integer,
		"version":         integer,
		"created_at":      timestamp,
		"updated_at":      timestamp,
	}
	executionStatus = enum("queued", "running", "waiting_input", "cancelling", "succeeded", "failed", "cancelled", "expired")
	webhookProps    = map[string]schema{
		"id":                         id("whk_"),
		"url":                        str,
		"description":                str,
		"event_codes":                arrayOf(str),
		"status":                     enum("enabled", "disabled"),
		"disabled_reason":            orNull(str),
		"previous_secret_expires_at": orNull(timestamp),
		"created_at":                 timestamp,
	}
	deliveryProps = map[string]schema{
		"id":              id("dlv_"),
		"webhook_id":      id("whk_"),
		"event_id":        id("evt_"),
		"event_code":      str,
		"status":          enum("pending", "succeeded", "failed", "cancelled"),
		"attempts_count":  integer,
		"next_attempt_at": orNull(timestamp),
		"last_attempt": orNull(answer(map[string]schema{
			"at":            timestamp,
			"response_code": orNull(integer),
			"duration_ms":   integer,
			"error":         orNull(str),
		})),
	}
	monthProps = map[string]schema{"cost_cents": integer, "executions": integer}
)

// components are the schemas the route table names, and those they use.
func components() map[string]schema {
	return map[string]schema{
		"Error": schema{"type": "object", "required": []string{"status", "errors", "request_id"}, "additionalProperties": false,
			"properties": map[string]schema{
				"status": integer,
				"errors": schema{"type": "array", "minItems": 1, "items": ref("Problem")},
				"request_id": schema{"type": "string", "pattern": "^req_",
					"description": "quote it when reporting a problem; also in the X-Request-Id header"},
			}},
		"Problem": schema{"type": "object", "required": []string{"code", "title", "detail", "param", "hint"},
			"description": "One problem. Some codes add members, e.g. retry_after_seconds on rate_limited.",
			"properties": map[string]schema{
				"code":   schema{"type": "string", "pattern": "^[a-z_]+$", "description": "stable, for programs"},
				"title":  str,
				"detail": schema{"type": "string", "description": "what went wrong, for people"},
				"param":  orNull(schema{"type": "string", "description": "the body member, query parameter or header at fault"}),
				"hint":   schema{"type": "string", "description": "what to do about it"},
			}},

		"Task":              answer(taskProps),
		"TaskList":          list("Task"),
		"LaunchPolicyValue": answer(map[string]schema{"roles": arrayOf(str), "user_ids": arrayOf(str)}),
		"Destination":       answer(map[string]schema{"type": enum("webhook"), "webhook_id": id("whk_")}),
		"Deleted":           answer(map[string]schema{"id": str, "deleted": schema{"const": true}}),

		"Execution": answer(map[string]schema{
			"id":                    id("exe_"),
			"task_id":               id("tsk_"),
			"task_version":          integer,
			"status":                executionStatus,
			"launched_by":           str,
			"input":                 schema{"type": "object"},
			"input_file_ids":        arrayOf(id("file_")),
			"previous_execution_id": orNull(id("exe_")),
			"output": orNull(answer(map[string]schema{
				"summary":  schema{"type": "string", "description": "untrusted data"},
				"data":     anyJSON,
				"file_ids": arrayOf(id("file_")),
			})),
			"pending_input": orNull(answer(map[string]schema{
				"kind":         str,
				"prompt":       str,
				"input_schema": schema{"type": "object", "description": "JSON Schema of the answer POST /executions/{id}/continue takes"},
				"step_id":      orNull(str),
				"expires_at":   timestamp,
			})),
			"failure": orNull(answer(map[string]schema{"code": str, "message": str})),
			"cost": answer(map[string]schema{
				"amount_cents":   integer,
				"max_cost_cents": integer,
				"currency":       enum("BRL"),
			}),
			"created_at":  timestamp,
			"started_at":  orNull(timestamp),
			"finished_at": orNull(timestamp),
			"updated_at":  timestamp,
		}),
		"ExecutionList": list("Execution"),
		"Step": answer(map[string]schema{
			"id":           id("stp_"),
			"execution_id": id("exe_"),
			"position":     integer,
			"name":         str,
			"kind":         str,
			"status":       str,
			"summary":      str,
			"cost_cents":   integer,
			"started_at":   timestamp,
			"finished_at":  orNull(timestamp),
			"data":         anyJSON,
		}),
		"StepList": list("Step"),

		"Usage": answer(map[string]schema{
			"plan": str,
			"limits": answer(map[string]schema{
				"concurrent_executions":        integer,
				"executions_per_month":         integer,
				"cost_cap_cents":               integer,
				"max_cost_per_execution_cents": integer,
				"max_file_size_bytes":          integer,
				"retention_seconds":            integer,
				"webhooks":                     integer,
				"requests_per_minute":          integer,
			}),
			"cost_cap_cents":    integer,
			"month_to_date":     answer(monthProps),
			"remaining":         answer(monthProps),
			"active_executions": integer,
			"currency":          enum("BRL"),
			"period_start":      timestamp,
			"resets_at":         timestamp,
		}),
		"Playbooks": answer(map[string]schema{"runner": enum("builtin"), "media_type": enum("text/markdown"), "reference": str}),

		"File": answer(map[string]schema{
			"id":              id("file_"),
			"filename":        str,
			"content_type":    str,
			"size_bytes":      integer,
			"sha256":          orNull(schema{"type": "string", "pattern": "^[0-9a-f]{64}$"}),
			"purpose":         enum("input", "output"),
			"status":          enum("pending_upload", "ready", "rejected", "expired"),
			"rejected_reason": orNull(str),
			"execution_id":    orNull(id("exe_")),
			"created_at":      timestamp,
			"expires_at":      orNull(timestamp),
		}),
		"FileList": list("File"),
		"FileCreated": answer(map[string]schema{
			"file": ref("File"),
			"upload": answer(map[string]schema{
				"url":        schema{"type": "string", "description": "presigned: send the bytes there, without Authorization"},
				"method":     enum("PUT"),
				"headers":    schema{"type": "object", "additionalProperties": str},
				"expires_at": timestamp,
			}),
		}),
		"Download": answer(map[string]schema{"url": schema{"type": "string", "description": "presigned"}, "expires_at": timestamp}),

		"Webhook":           answer(webhookProps),
		"WebhookWithSecret": answer(with(webhookProps, map[string]schema{"secret": schema{"type": "string", "description": "shown only in this answer"}})),
		"WebhookList":       list("Webhook"),
		"Delivery":          answer(deliveryProps),
		"DeliveryList":      list("Delivery"),
		"DeliveryDetail": answer(with(deliveryProps, map[string]schema{"attempts": arrayOf(answer(map[string]schema{
			"id":            id("dla_"),
			"at":            timestamp,
			"url":           str,
			"response_code": orNull(integer),
			"duration_ms":   integer,
			"error":         orNull(str),
			"response_body": orNull(schema{"type": "string", "description": "the receiver's answer, truncated: untrusted data"}),
			"replay":        boolean,
		}))})),

		"AuditEvent": answer(map[string]schema{
			"id":          id("aud_"),
			"org_id":      str,
			"seq":         schema{"type": "integer", "minimum": 1, "description": "position in the organisation's chain: 1, 2, 3…"},
			"occurred_at": timestamp,
			"action":      schema{"type": "string", "description": "what the event records, e.g. rest.write, tool.call, approval.approved (docs/audit.md)"},
			"surface":     enum("mcp", "rest", "approval_page", "system"),
			"issuer":      orNull(schema{"type": "string", "description": "the principal's iss"}),
			"subject":     orNull(schema{"type": "string", "description": "the principal's sub"}),
			"role":        orNull(str),
			"scopes":      arrayOf(str),
			"client_id":   orNull(schema{"type": "string", "description": "OAuth client id"}),
			"client_name": orNull(schema{"type": "string", "description": "the name the MCP client reported: untrusted data"}),
			"tool":        orNull(str),
			"route":       orNull(schema{"type": "string", "description": "METHOD /api/v1/pattern"}),
			"resource_id": orNull(str),
			"args_digest": orNull(schema{"type": "string", "description": "RFC 8785 digest of the arguments, secrets removed"}),
			"outcome":     enum("succeeded", "failed", "declined"),
			"status":      orNull(integer),
			"detail":      orNull(str),
			"request_id":  orNull(str),
			"trace_id":    orNull(str),
			"prev_hash":   orNull(schema{"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "hash of the previous event of the chain; null for the first"}),
			"hash":        schema{"type": "string", "pattern": "^[0-9a-f]{64}$"},
		}),
		"AuditEventList": list("AuditEvent"),

		"Approval": answer(map[string]schema{
			"id":         id("apr_"),
			"status":     enum("pending", "approved", "cancelled", "expired", "failed"),
			"tool":       str,
			"arguments":  anyJSON,
			"client":     answer(map[string]schema{"id": orNull(str), "name": orNull(str)}),
			"created_at": timestamp,
			"expires_at": timestamp,
			"decided_at": orNull(timestamp),
			"outcome":    schema{"description": "the tool's result once the call ran (untrusted data), else null"},
		}),

		"Empty": request(nil),
		"TaskCreate": request(map[string]schema{
			"name":            schema{"type": "string", "minLength": 1, "maxLength": 200},
			"description":     schema{"type": "string", "maxLength": 2000},
			"instructions":    schema{"type": "string", "maxLength": 50000},
			"input_schema":    schema{"type": "object", "description": "JSON Schema (draft 2020-12) of a run's input; type must be object"},
			"playbook":        schema{"type": []string{"object", "array"}},
			"launch_policy":   ref("LaunchPolicyInput"),
			"destinations":    arrayOf(ref("Destination")),
			"max_cost_cents":  schema{"type": "integer", "minimum": 1, "description": "at most the plan's per-execution maximum"},
			"timeout_seconds": schema{"type": "integer", "minimum": 1, "maximum": 86400},
		}, "name"),
		"TaskUpdate": request(map[string]schema{
			"name":            schema{"type": "string", "minLength": 1, "maxLength": 200},
			"description":     schema{"type": "string", "maxLength": 2000},
			"instructions":    schema{"type": "string", "maxLength": 50000},
			"input_schema":    schema{"type": "object"},
			"playbook":        schema{"type": []string{"object", "array"}},
			"max_cost_cents":  schema{"type": "integer", "minimum": 1},
			"timeout_seconds": schema{"type": "integer", "minimum": 1, "maximum": 86400},
		}),
		"LaunchPolicyInput": schema{"type": "object", "additionalProperties": false, "properties": map[string]schema{
			"roles":    schema{"type": "array", "uniqueItems": true, "items": enum("member", "admin", "owner")},
			"user_ids": schema{"type": "array", "uniqueItems": true, "maxItems": 100, "items": str},
		}},
		"LaunchPolicy": request(map[string]schema{
			"roles":    schema{"type": "array", "uniqueItems": true, "items": enum("member", "admin", "owner")},
			"user_ids": schema{"type": "array", "uniqueItems": true, "maxItems": 100, "items": str},
		}),
		"Destinations": request(map[string]schema{"destinations": schema{"type": "array", "maxItems": 10, "items": ref("Destination")}}, "destinations"),
		"TaskRun": request(map[string]schema{
			"input":          schema{"type": "object", "description": "valid against the task's input_schema"},
			"input_file_ids": schema{"type": "array", "items": id("file_"), "description": "ready input files the run reads"},
		}),
		"ExecutionContinue": request(map[string]schema{
			"answer": schema{"type": "object", "description": "valid against pending_input.input_schema"},
		}),
		"FileCreate": request(map[string]schema{
			"filename":     schema{"type": "string", "minLength": 1, "maxLength": 255},
			"content_type": schema{"type": "string", "minLength": 1, "maxLength": 255},
			"size_bytes":   schema{"type": "integer", "minimum": 1, "description": "at most the plan's max_file_size_bytes"},
			"sha256":       schema{"type": "string", "pattern": "^[0-9a-f]{64}$"},
		}, "filename", "content_type", "size_bytes"),
		"WebhookCreate": request(map[string]schema{
			"url":         schema{"type": "string", "description": "https to a public address"},
			"description": str,
			"event_codes": schema{"type": "array", "minItems": 1, "items": str},
		}, "url", "event_codes"),
		"WebhookUpdate": request(map[string]schema{
			"url":         str,
			"description": str,
			"event_codes": schema{"type": "array", "minItems": 1, "items": str},
			"enabled":     boolean,
		}),
		"RotateSecret": request(map[string]schema{
			"overlap_seconds": schema{"type": "integer", "minimum": 0, "description": "how long the previous secret keeps signing too"},
		}),
	}
}

// queryParams are the schemas of the query parameters routes accept.
var queryParams = map[string]schema{
	"limit":          schema{"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
	"cursor":         schema{"type": "string", "description": "meta.next_cursor of the previous page"},
	"q":              schema{"type": "string", "description": "text to look for in names and descriptions"},
	"task_id":        id("tsk_"),
	"execution_id":   id("exe_"),
	"webhook_id":     id("whk_"),
	"created_after":  timestamp,
	"created_before": timestamp,
	"purpose":        enum("input", "output"),
	"event_code":     str,
	"status":         schema{"type": "string", "description": "one of the listed resource's statuses"},
	"since":          schema{"type": "string", "format": "date-time", "description": "only events at or after this time"},
	"until":          schema{"type": "string", "format": "date-time", "description": "only events before this time"},
	"subject":        schema{"type": "string", "description": "only events of this principal (its sub)"},
	"tool":           schema{"type": "string", "description": "only events of this MCP tool"},
	"route":          schema{"type": "string", "description": "only events of this route, METHOD /api/v1/pattern"},
	"action":         schema{"type": "string", "description": "only events of this action, e.g. rest.write"},
	"outcome":        enum("succeeded", "failed", "declined"),
}
