package kadu

import "errors"

// MaxCompletionValues is the most values a completion returns; more are
// cut and HasMore is set.
const MaxCompletionValues = 100

// Completion suggests values for the arguments of the bundle's prompts and
// resource templates. A bundle registers at most one.
type Completion struct {
	Complete func(c *Call, req CompleteRequest) (CompleteResult, error)
}

// CompleteRequest asks for suggestions for one argument.
type CompleteRequest struct {
	Ref       CompleteRef       `json:"ref"`
	Argument  CompleteArgument  `json:"argument"`
	Arguments map[string]string `json:"-"` // the other arguments already chosen (context.arguments)
}

// CompleteRef names what is being completed: Type "ref/prompt" with Name,
// or "ref/resource" with URI (the template).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and what the person
// typed so far.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteResult holds the suggestions, best first.
type CompleteResult struct {
	Values  []string
	Total   int // all matches, when known; 0 leaves it out
	HasMore bool
}

type completionWire struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total,omitempty"`
		HasMore bool     `json:"hasMore,omitempty"`
	} `json:"completion"`
}

func (cp Completion) addTo(r *registry) error {
	switch {
	case cp.Complete == nil:
		return errors.New("completion: Complete: required")
	case r.complete != nil:
		return errors.New("completion: registered twice; a bundle has one Completion")
	}
	r.complete = &cp
	r.m.Completions = true
	return nil
}

func (res CompleteResult) wire() completionWire {
	var w completionWire
	w.Completion.Values = res.Values
	if w.Completion.Values == nil {
		w.Completion.Values = []string{}
	}
	w.Completion.Total = res.Total
	w.Completion.HasMore = res.HasMore
	if len(w.Completion.Values) > MaxCompletionValues {
		w.Completion.Values = w.Completion.Values[:MaxCompletionValues]
		w.Completion.HasMore = true
	}
	return w
}
