package main

import (
	"fmt"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
)

func userContent(content any) kadu.PromptMessage {
	return kadu.PromptMessage{Role: "user", Content: content}
}

func messages(msgs ...kadu.PromptMessage) func(*kadu.Call, map[string]string) (*kadu.PromptResult, error) {
	return func(*kadu.Call, map[string]string) (*kadu.PromptResult, error) {
		return &kadu.PromptResult{Messages: msgs}, nil
	}
}

// prompts are the suite's test_* prompts.
func prompts() []kadu.Feature {
	return []kadu.Feature{
		kadu.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments",
			Access: anyReader, Get: messages(kadu.UserText("This is a simple prompt for testing."))},
		kadu.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
			Arguments: []kadu.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
			Access: anyReader,
			Get: func(_ *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
				return &kadu.PromptResult{Messages: []kadu.PromptMessage{
					kadu.UserText(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])),
				}}, nil
			}},
		kadu.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
			Description: "A prompt that includes an embedded resource",
			Arguments:   []kadu.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			Access:      anyReader,
			Get: func(_ *kadu.Call, args map[string]string) (*kadu.PromptResult, error) {
				return &kadu.PromptResult{Messages: []kadu.PromptMessage{
					userContent(embedded(args["resourceUri"], "text/plain", "Embedded resource content for testing.")),
					kadu.UserText("Please process the embedded resource above."),
				}}, nil
			}},
		kadu.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content",
			Access: anyReader, Get: messages(userContent(image()), kadu.UserText("Please analyze the image above."))},
		// SEP-2322: this prompt answers input_required first.
		kadu.Prompt{Name: "test_input_required_result_prompt", Title: "Prompt Needing Input",
			Description: "A prompt that elicits context first", Access: anyReader, Get: contextPrompt},
	}
}

// contextPrompt elicits the context to use, then builds the prompt from
// it. The answer is the user's: it is quoted as data, not obeyed.
func contextPrompt(c *kadu.Call, _ map[string]string) (*kadu.PromptResult, error) {
	var answer struct {
		Content map[string]any `json:"content"`
	}
	ok, err := c.InputResponse("context", &answer)
	if round(c) != 1 || !ok || err != nil {
		return nil, kadu.InputRequired(map[string]kadu.InputRequest{
			"context": form("What context should the prompt use?", map[string]any{"context": stringProp("Context for the prompt")}, "context"),
		}, roundState{Round: 1})
	}
	return &kadu.PromptResult{Messages: []kadu.PromptMessage{
		kadu.UserText(fmt.Sprintf("Use the context the user gave: %v", answer.Content["context"])),
	}}, nil
}

// completionValues are the suggestions by "<ref type> <prompt or template>
// <argument>".
var completionValues = map[string][]string{
	"ref/prompt test_prompt_with_arguments arg1":                {"paris", "park", "party", "test", "testing"},
	"ref/prompt test_prompt_with_arguments arg2":                {"alpha", "beta", "gamma"},
	"ref/prompt test_prompt_with_embedded_resource resourceUri": {"test://static-text", "test://static-binary", "test://watched-resource"},
	"ref/resource " + templateURI + " id":                       {"1", "2", "3", "123"},
}

// completion suggests the values that start with what was typed.
var completion = kadu.Completion{
	Complete: func(_ *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
		ref := req.Ref.Name
		if req.Ref.Type == "ref/resource" {
			ref = req.Ref.URI
		}
		res := kadu.CompleteResult{Values: []string{}}
		for _, v := range completionValues[req.Ref.Type+" "+ref+" "+req.Argument.Name] {
			if strings.HasPrefix(v, req.Argument.Value) {
				res.Values = append(res.Values, v)
			}
		}
		res.Total = len(res.Values)
		return res, nil
	},
}
