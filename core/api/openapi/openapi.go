// Package openapi renders the REST API's reference from the route table
// (core/api/routeclass): an OpenAPI 3.1 document, which core/api serves at
// GET /api/v1/openapi.json, and its Markdown form, docs/reference/api.md.
//
// It owns: the JSON Schemas of the API's request and response bodies
// (schemas.go), which the table names, and the two renderings.
//
// It must not: serve anything or know the handlers. core/api's tests check
// every answer its handlers give against the document, so a handler and
// this package cannot drift apart unnoticed.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/api/routeclass"
)

// Path is where core/api serves the document.
const Path = routeclass.Prefix + "/openapi.json"

// Version is the document's info.version: the API's major version; a
// change that could break a client would be a new base path.
const Version = "1"

const description = `Kadu's REST API: tasks, executions, files, webhooks, approvals and usage, for the
organisation of the access token. Every MCP tool of the first-party bundles calls one of these routes.

Every route needs an access token (Authorization: Bearer) whose role is at least the route's
(x-kadu-role) and whose scopes include the route's (the security requirement); a role too low is
403 forbidden_role, a missing scope 403 insufficient_scope with a WWW-Authenticate step-up challenge.
Errors share one shape (Error). Writes take an idempotency key (the idempotency_key body member or the
Idempotency-Key header): a retry with the same key and body within 24 hours gets the stored answer
(Idempotent-Replayed: true) instead of acting twice.
Lists are pages: pass meta.next_cursor back as cursor.

x-kadu-class says what a call can do: read, write, or destructive (deletes, spends money, sends data
out of Kadu, changes access, or cannot be undone); a bundle's tool may call a destructive route only
if it is itself destructive, and so confirmed by the person. This document is generated from the
route table, core/api/routeclass.`

// Document returns the OpenAPI 3.1 document of the routes, as indented
// JSON with a final newline. It is the same on every call.
func Document() []byte {
	b, err := json.MarshalIndent(document(routeclass.Routes()), "", "  ")
	if err != nil {
		// Only the literals of this package go in: a bug, not an input.
		panic(fmt.Sprintf("openapi: %v", err))
	}
	return append(b, '\n')
}

func document(routes []routeclass.Route) schema {
	paths := map[string]schema{}
	for _, r := range routes {
		p, ok := paths[r.Path]
		if !ok {
			p = schema{}
			paths[r.Path] = p
		}
		p[strings.ToLower(r.Method)] = operation(r)
	}
	return schema{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": schema{
			"title":       "Kadu REST API",
			"version":     Version,
			"description": description,
		},
		"paths":    paths,
		"security": []any{schema{"bearer": []string{}}},
		"components": schema{
			"schemas": components(),
			"securitySchemes": schema{"bearer": schema{
				"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
				"description": "An OAuth 2.1 access token for this server, with the scopes kadu.read, kadu.write, kadu.run and kadu.admin as the routes require.",
			}},
			"responses": schema{"Error": schema{
				"description": "An error: its status, one problem or more, and the request id.",
				"content":     schema{"application/json": schema{"schema": ref("Error")}},
			}},
		},
	}
}

// TokenScope is the access token's spelling of a table scope.
func TokenScope(scope string) string { return "kadu." + scope }

func operation(r routeclass.Route) schema {
	op := schema{
		"operationId":       operationID(r),
		"summary":           r.Summary,
		"tags":              []string{r.Bundle},
		"security":          []any{schema{"bearer": []string{TokenScope(r.Scope)}}},
		"x-kadu-role":       r.Role,
		"x-kadu-class":      r.Class.String(),
		"x-kadu-idempotent": r.Idempotent,
	}
	if r.Tool != "" {
		op["x-kadu-tool"] = r.Tool
	}
	var params []any
	if strings.Contains(r.Path, "{id}") {
		params = append(params, schema{"name": "id", "in": "path", "required": true, "schema": str,
			"description": "the resource's id"})
	}
	for _, q := range r.Query {
		params = append(params, schema{"name": q, "in": "query", "required": false, "schema": queryParams[q]})
	}
	if params != nil {
		op["parameters"] = params
	}
	if r.Request != "" {
		req, _ := components()[r.Request]["required"].([]string)
		op["requestBody"] = schema{
			"required": len(req) > 0,
			"content":  schema{"application/json": schema{"schema": ref(r.Request)}},
		}
	}
	responses := schema{"default": schema{"$ref": "#/components/responses/Error"}}
	for _, st := range r.Statuses {
		responses[strconv.Itoa(st)] = schema{
			"description": http.StatusText(st),
			"content":     schema{"application/json": schema{"schema": ref(r.Response)}},
		}
	}
	op["responses"] = responses
	return op
}

// operationID is the tool's name without its kadu_ prefix, or one made of
// the method and path for a route no tool mirrors.
func operationID(r routeclass.Route) string {
	if r.Tool != "" {
		return strings.TrimPrefix(r.Tool, "kadu_")
	}
	p := strings.Trim(strings.TrimPrefix(r.Path, routeclass.Prefix), "/")
	p = strings.NewReplacer("/", "_", "{", "", "}", "").Replace(p)
	return strings.ToLower(r.Method) + "_" + p
}

// Markdown returns docs/reference/api.md: the routes in table order with
// their access, class and bodies, then the schemas.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Generated from core/api/routeclass by core/api/openapi; do not edit.\n")
	b.WriteString("     go test ./core/api/openapi -run TestReferenceUpToDate -update rewrites it. -->\n\n")
	b.WriteString("# REST API reference\n\n")
	b.WriteString(description + "\n\n")
	fmt.Fprintf(&b, "The same, as an OpenAPI 3.1 document: `GET %s` (no token needed).\n\n", Path)
	b.WriteString("## Routes\n\n")
	b.WriteString("| Method | Path | Role | Scope | Class | Idempotent | Tool |\n|---|---|---|---|---|---|---|\n")
	routes := routeclass.Routes()
	for _, r := range routes {
		tool := "—"
		if r.Tool != "" {
			tool = "`" + r.Tool + "`"
		}
		fmt.Fprintf(&b, "| `%s` | [`%s`](#%s) | %s | `%s` | %s | %s | %s |\n", r.Method, r.Path, anchor(r), r.Role,
			TokenScope(r.Scope), r.Class, yesNo(r.Idempotent), tool)
	}
	for _, r := range routes {
		fmt.Fprintf(&b, "\n### %s %s\n\n%s.\n\n", r.Method, r.Path, r.Summary)
		fmt.Fprintf(&b, "- Access: role %s or above, scope `%s`.\n", r.Role, TokenScope(r.Scope))
		fmt.Fprintf(&b, "- Class: %s; idempotent: %s.\n", r.Class, yesNo(r.Idempotent))
		if r.Tool != "" {
			fmt.Fprintf(&b, "- MCP tool: `%s` (bundle %s).\n", r.Tool, r.Bundle)
		}
		if len(r.Query) > 0 {
			fmt.Fprintf(&b, "- Query: %s.\n", codeList(r.Query))
		}
		if r.Request != "" {
			fmt.Fprintf(&b, "- Body: [%s](#%s).\n", r.Request, strings.ToLower(r.Request))
		}
		var sts []string
		for _, st := range r.Statuses {
			sts = append(sts, strconv.Itoa(st))
		}
		fmt.Fprintf(&b, "- Answer: %s [%s](#%s); otherwise an [Error](#error).\n", strings.Join(sts, " or "), r.Response, strings.ToLower(r.Response))
	}
	b.WriteString("\n## Schemas\n\nJSON Schema 2020-12. `$ref` names another schema of this list.\n")
	cs := components()
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		js, err := json.MarshalIndent(cs[n], "", "  ")
		if err != nil {
			panic(fmt.Sprintf("openapi: %v", err))
		}
		fmt.Fprintf(&b, "\n### %s\n\n```json\n%s\n```\n", n, js)
	}
	return b.Bytes()
}

// anchor is the GitHub anchor of a route's heading.
func anchor(r routeclass.Route) string {
	h := strings.ToLower(r.Method + " " + r.Path)
	var out strings.Builder
	for _, c := range h {
		switch {
		case c == ' ':
			out.WriteByte('-')
		case c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			out.WriteRune(c)
		}
	}
	return out.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}
