package api

import (
	"github.com/kobana/kadu/core/agent"
)

// playbookHandlers serve GET /playbooks: the reference of the built-in runner's
// playbook format, served to clients as the kobana://kadu/playbooks
// resource (docs/reference/mcp.md#resources-prompts-and-completions). It reads no data of the organisation; it is a route
// so that the tasks bundle reaches it like any other document, and so that
// the cost table has one source, core/agent.
func (a *API) playbookHandlers() map[string]handler {
	return map[string]handler{
		"GET /playbooks": a.getPlaybooks,
	}
}

// playbooksJSON is GET /playbooks. reference is Markdown
// (core/agent/PLAYBOOKS.md): step types, their parameters and their fixed costs.
type playbooksJSON struct {
	Runner    string `json:"runner"`
	MediaType string `json:"media_type"`
	Reference string `json:"reference"`
}

func (a *API) getPlaybooks(*call) (*reply, error) {
	return ok(playbooksJSON{Runner: "builtin", MediaType: "text/markdown", Reference: agent.PlaybooksReference()})
}
