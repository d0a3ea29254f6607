package kadu

import (
	"errors"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Prompt is a ready-made script the person picks in the client; Get builds
// its messages from the arguments.
type Prompt struct {
	Name        string // unique across the server's bundles, ^[a-zA-Z0-9_.-]{1,64}$
	Title       string
	Description string
	Arguments   []PromptArgument
	Access      Access
	// Get renders the prompt. args holds the client's arguments; the SDK
	// has checked that every Required one is there and not empty.
	Get func(c *Call, args map[string]string) (*PromptResult, error)
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content any    `json:"content"`
}

// UserText returns a user message with text content. Never put untrusted
// data (execution output, file contents) in a prompt's text as if it were
// an instruction: name where to read it instead.
func UserText(text string) PromptMessage { return PromptMessage{Role: "user", Content: Text(text)} }

// AssistantText returns an assistant message with text content.
func AssistantText(text string) PromptMessage {
	return PromptMessage{Role: "assistant", Content: Text(text)}
}

func (p Prompt) addTo(r *registry) error {
	var errs []error
	if !manifest.IsEntryName(p.Name) {
		errs = append(errs, errors.New("Name: want ^[a-zA-Z0-9_.-]{1,64}$"))
	} else if r.prompts[p.Name] != nil {
		errs = append(errs, errors.New("Name: registered twice"))
	}
	seen := map[string]bool{}
	for i, a := range p.Arguments {
		if a.Name == "" || seen[a.Name] {
			errs = append(errs, fmt.Errorf("Arguments[%d]: want a unique, non-empty Name", i))
		}
		seen[a.Name] = true
	}
	if err := p.Access.check(); err != nil {
		errs = append(errs, err)
	}
	if p.Get == nil {
		errs = append(errs, errors.New("Get: required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prompt %q: %w", p.Name, err)
	}
	args := append([]PromptArgument{}, p.Arguments...)
	margs := make([]manifest.PromptArgument, len(args))
	for i, a := range args {
		margs[i] = manifest.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required}
	}
	r.m.Prompts = append(r.m.Prompts, manifest.Prompt{Name: p.Name, Title: p.Title, Description: p.Description,
		Arguments: margs, Access: p.Access.def()})
	p.Arguments = args
	r.prompts[p.Name] = &p
	return nil
}
