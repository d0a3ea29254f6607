// Command routeguest is core/app's test bundle "probe" for route classes
// (sdk/ABI.md): every kind of operation — a read-only tool, a write tool,
// a destructive tool, a resource template, a prompt and completions —
// makes the one api() call its argument names, and answers with the
// status and the API's error code, so a test can see which operation the
// host lets call which class of route.
package main

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// missing is a task id no organisation has: a call the host lets through
// reaches the API and answers 404 not_found, so nothing changes.
const missing = "tsk_0195f0a1b2c37d8e9f00112233445566"

// calls are the requests by kind: one route of each class.
var calls = map[string][2]string{
	"read":   {"GET", "/api/v1/tasks?limit=1"},
	"write":  {"PATCH", "/api/v1/tasks/" + missing},
	"run":    {"POST", "/api/v1/tasks/" + missing + "/run"},
	"delete": {"DELETE", "/api/v1/tasks/" + missing},
}

// probe makes the call of kind and describes its answer: "STATUS CODE".
func probe(c *kadu.Call, kind string) (string, error) {
	call, ok := calls[kind]
	if !ok {
		return "", fmt.Errorf("unknown kind %q: want read, write, run or delete", kind)
	}
	var body any
	if call[0] == "PATCH" {
		body = map[string]string{"description": "probe"}
	}
	r, err := c.API(call[0], call[1], body)
	if err != nil {
		return "", err
	}
	var e struct {
		Errors []struct {
			Code string `json:"code"`
		} `json:"errors"`
	}
	code := ""
	if json.Unmarshal(r.Body, &e) == nil && len(e.Errors) > 0 {
		code = e.Errors[0].Code
	}
	return fmt.Sprintf("%d %s", r.Status, code), nil
}

type in struct {
	Kind string `json:"kind"`
}

type out struct {
	Answer string `json:"answer"`
}

var kindSchema = kadu.ObjectSchema(kadu.Property{Name: "kind", Required: true,
	Schema: `{"enum":["read","write","run","delete"]}`})

func tool(name string, a *kadu.Annotations) kadu.Tool[in, out] {
	return kadu.Tool[in, out]{
		Name: name, Description: "Makes the API call of kind and answers with its status.",
		InputSchema: kindSchema, Annotations: a,
		Access: kadu.Access{MinRole: kadu.RoleAdmin, Scope: kadu.ScopeRead},
		Handler: func(c *kadu.Call, args in) (out, error) {
			s, err := probe(c, args.Kind)
			return out{Answer: s}, err
		},
	}
}

var access = kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead}

// A c-shared module never runs main: the bundle registers from init.
func init() {
	kadu.Register(kadu.Bundle{
		Name: "probe", Version: "1.0.0",
		Description: "Test bundle of core/app: which operation may call which class of route.",
		Routes: []string{"GET /api/v1/tasks", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run",
			"DELETE /api/v1/tasks/{id}"},
	},
		tool("probe_read", &kadu.Annotations{ReadOnly: true}),
		tool("probe_write", &kadu.Annotations{}),
		tool("probe_destroy", &kadu.Annotations{Destructive: true}),
		kadu.ResourceTemplate{URITemplate: "probe://call/{kind}", Name: "call", MIMEType: "text/plain", Access: access,
			Read: func(c *kadu.Call, uri string, vars map[string]string) ([]kadu.ResourceContents, error) {
				s, err := probe(c, vars["kind"])
				return []kadu.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: s}}, err
			}},
		kadu.Prompt{Name: "probe_call", Arguments: []kadu.PromptArgument{{Name: "kind", Required: true}}, Access: access,
			Get: func(c *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
				s, err := probe(c, args["kind"])
				return &kadu.PromptResult{Messages: []kadu.PromptMessage{kadu.UserText(s)}}, err
			}},
		kadu.Completion{Complete: func(c *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
			s, err := probe(c, req.Argument.Value)
			return kadu.CompleteResult{Values: []string{s}}, err
		}},
	)
}

func main() {}
