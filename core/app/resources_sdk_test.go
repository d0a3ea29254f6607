package app

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/kadu/core/config"
)

// TestOfficialGoClientResources drives Kadu's resources, prompts and
// completions with the official MCP Go SDK client, signed in through the
// embedded authorization server, in both eras: what a real client lists,
// reads, renders and is offered.
func TestOfficialGoClientResources(t *testing.T) {
	srv := startServerCatalog(t, true, nil, func(c *config.Config) {
		useFirstPartyBundles(t, c)
	})
	// The person signing in is the development default: dev-user, owner of
	// org_dev. Their data, made through the REST API.
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_dev", Role: "owner", Subject: "dev-user"})
	if err != nil {
		t.Fatal(err)
	}
	owner := &toolCaller{t: t, token: token, rest: restClient{t: t, base: srv.baseURL, token: token}}
	task := createTask(t, owner, `{"name":"Tarefa do SDK"}`)
	exe := runTask(t, owner, task, `{}`)

	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "kadu-e2e", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: srv.cfg.MCPURL(), OAuthHandler: signIn(t), MaxRetries: -1,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %q, want %q", got, version)
			}

			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatalf("ListResources: %v", err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
			}
			slices.Sort(uris)
			if want := []string{"kobana://kadu/guide", "kobana://kadu/playbooks", "kobana://kadu/usage"}; !slices.Equal(uris, want) {
				t.Errorf("resources = %v, want %v", uris, want)
			}
			// The sign-in asked for kadu.read: the admin template is not offered.
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatalf("ListResourceTemplates: %v", err)
			}
			var tmpls []string
			for _, r := range templates.ResourceTemplates {
				tmpls = append(tmpls, r.URITemplate)
			}
			if len(tmpls) != 4 || !slices.Contains(tmpls, "kobana://kadu/tasks/{id}") || slices.Contains(tmpls, "kobana://kadu/webhooks/{id}") {
				t.Errorf("templates = %v, want the four readable ones", tmpls)
			}

			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "kobana://kadu/tasks/" + task})
			if err != nil {
				t.Fatalf("ReadResource(task): %v", err)
			}
			var doc map[string]any
			if c := read.Contents[0]; c.MIMEType != "application/json" || json.Unmarshal([]byte(c.Text), &doc) != nil || doc["id"] != task {
				t.Errorf("task resource = %+v, want the task's JSON", c)
			}
			guide, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "kobana://kadu/guide"})
			if err != nil || guide.Contents[0].MIMEType != "text/markdown" || !strings.Contains(guide.Contents[0].Text, "kadu_executions_continue") {
				t.Errorf("guide = %+v, %v; want the Markdown guide", guide, err)
			}
			_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "kobana://kadu/executions/exe_" + unknownHex})
			if err == nil || !strings.Contains(err.Error(), "Resource not found") {
				t.Errorf("ReadResource(unknown execution) = %v, want Resource not found", err)
			}

			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatalf("ListPrompts: %v", err)
			}
			if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "investigate_failed_executions" {
				t.Errorf("prompts for kadu.read = %+v, want investigate_failed_executions", prompts.Prompts)
			}
			got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "investigate_failed_executions",
				Arguments: map[string]string{"since": "2020-01-01"}})
			if err != nil {
				t.Fatalf("GetPrompt: %v", err)
			}
			if len(got.Messages) != 1 {
				t.Fatalf("GetPrompt messages = %+v", got.Messages)
			}
			if text, ok := got.Messages[0].Content.(*sdk.TextContent); !ok || !strings.Contains(text.Text, "<kadu-data source=") {
				t.Errorf("prompt message = %+v, want text with a data block", got.Messages[0].Content)
			}

			for _, tt := range []struct{ uri, want string }{
				{"kobana://kadu/tasks/{id}", task},
				{"kobana://kadu/executions/{id}", exe},
			} {
				comp, err := cs.Complete(ctx, &sdk.CompleteParams{
					Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: tt.uri},
					Argument: sdk.CompleteParamsArgument{Name: "id", Value: ""},
				})
				if err != nil {
					t.Fatalf("Complete(%s): %v", tt.uri, err)
				}
				if !slices.Contains(comp.Completion.Values, tt.want) {
					t.Errorf("Complete(%s) = %+v, want %s among the values", tt.uri, comp.Completion, tt.want)
				}
			}
		})
	}
}
