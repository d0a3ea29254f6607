package app

import (
	"context"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

// emptyCatalog serves no tools, resources or prompts: what Kadu offers
// comes from bundles, and none is configured.
type emptyCatalog struct{}

var _ mcp.Catalog = emptyCatalog{}

func (emptyCatalog) Tools(context.Context, *auth.Principal) ([]mcp.Tool, error) { return nil, nil }

func (emptyCatalog) CallTool(context.Context, *auth.Principal, *mcp.ToolCall) (*mcp.ToolResult, error) {
	return nil, mcp.InvalidParams("Unknown tool")
}

func (emptyCatalog) Resources(context.Context, *auth.Principal) ([]mcp.Resource, error) {
	return nil, nil
}

func (emptyCatalog) ResourceTemplates(context.Context, *auth.Principal) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}

func (emptyCatalog) ReadResource(context.Context, *auth.Principal, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, mcp.ErrResourceNotFound
}

func (emptyCatalog) Prompts(context.Context, *auth.Principal) ([]mcp.Prompt, error) { return nil, nil }

func (emptyCatalog) GetPrompt(context.Context, *auth.Principal, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, mcp.ErrPromptNotFound
}

func (emptyCatalog) Complete(context.Context, *auth.Principal, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}
