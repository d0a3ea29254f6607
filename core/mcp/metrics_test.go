package mcp

import "testing"

func TestTemplateMatches(t *testing.T) {
	for _, c := range []struct {
		tmpl, uri string
		want      bool
	}{
		{"kadu://executions/{id}", "kadu://executions/exe_1", true},
		{"kadu://executions/{id}", "kadu://executions/", false},
		{"kadu://executions/{id}", "kadu://executions/exe_1/steps", false},
		{"kadu://executions/{id}/steps", "kadu://executions/exe_1/steps", true},
		{"kadu://tasks/{id}.json", "kadu://tasks/tsk_1.json", true},
		{"kadu://tasks", "kadu://tasks", true},
		{"kadu://tasks", "kadu://tasks/x", false},
		{"kadu://files/{id}", "kadu://other/f", false},
	} {
		if got := templateMatches(c.tmpl, c.uri); got != c.want {
			t.Errorf("templateMatches(%q, %q) = %v, want %v", c.tmpl, c.uri, got, c.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		x    exchange
		want string
	}{
		{exchange{status: 200}, "ok"},
		{exchange{status: 200, toolError: true}, "tool_error"},
		{exchange{status: 200, inputRequired: true}, "input_required"},
		{exchange{status: 202}, "accepted"},
		{exchange{status: 401, rpcCode: CodeUnauthorized}, "jsonrpc_unauthorized"},
		{exchange{status: 200, rpcCode: CodeInvalidParams}, "jsonrpc_invalid_params"},
		{exchange{status: 200, rpcCode: -32050}, "jsonrpc_server_error"},
		{exchange{status: 200, rpcCode: 7}, "jsonrpc_other"},
		{exchange{status: 413}, "http_4xx"},
		{exchange{}, "http_none"},
	} {
		if got := c.x.outcome(); got != c.want {
			t.Errorf("outcome of %+v = %q, want %q", c.x, got, c.want)
		}
	}
}
