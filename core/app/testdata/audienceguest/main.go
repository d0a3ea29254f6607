// Command audienceguest is core/app's test bundle "partner": a partner's
// bundle an operator shows to some organisations only. It offers one of
// each thing an audience hides: a tool, a resource template, a prompt and
// completions for both, so the test can check each is absent for an
// organisation outside the audience.
package main

import (
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// hello is partner_hello's answer.
type hello struct {
	Org string `json:"org"`
}

// A c-shared module never runs main: the bundle registers from init.
func init() {
	read := kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead}
	kadu.Register(kadu.Bundle{
		Name:        "partner",
		Version:     "1.0.0",
		Description: "Test bundle of core/app: a partner's bundle for some organisations only.",
	},
		kadu.Tool[struct{}, hello]{
			Name:         "partner_hello",
			Title:        "Partner hello",
			Description:  "Greets the caller's organisation.",
			InputSchema:  kadu.ObjectSchema(),
			OutputSchema: []byte(`{"type":"object","properties":{"org":{"type":"string"}},"required":["org"]}`),
			Annotations:  &kadu.Annotations{ReadOnly: true, Idempotent: true},
			Access:       read,
			Handler: func(c *kadu.Call, _ struct{}) (hello, error) {
				return hello{Org: c.Caller().OrgID}, nil
			},
		},
		kadu.ResourceTemplate{
			URITemplate: "partner://offers/{id}",
			Name:        "offer",
			Description: "One of the partner's offers.",
			MIMEType:    "text/plain",
			Access:      read,
			Read: func(_ *kadu.Call, uri string, vars map[string]string) ([]kadu.ResourceContents, error) {
				return []kadu.ResourceContents{{URI: uri, Text: "offer " + vars["id"]}}, nil
			},
		},
		kadu.Prompt{
			Name:        "partner_offer",
			Description: "Presents one of the partner's offers.",
			Arguments:   []kadu.PromptArgument{{Name: "offer", Required: true}},
			Access:      read,
			Get: func(_ *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
				return &kadu.PromptResult{Messages: []kadu.PromptMessage{kadu.UserText("Present offer " + args["offer"] + ".")}}, nil
			},
		},
		kadu.Completion{Complete: func(_ *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
			var out []string
			for _, v := range []string{"gold", "silver"} {
				if strings.HasPrefix(v, req.Argument.Value) {
					out = append(out, v)
				}
			}
			return kadu.CompleteResult{Values: out}, nil
		}},
	)
}

func main() {}
