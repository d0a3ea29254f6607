package main

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// The tools of this file ask the client for input (SEP-2322): they answer
// input_required with their requests and a small state, and the client
// calls again with its answers and the requestState the host sealed from
// that state. The host refuses a tampered or foreign requestState with
// -32602 before the tool runs, so what State decodes is what the tool
// wrote.

// roundState is the state of a multi-round tool: the round whose answers
// the next call carries.
type roundState struct {
	Round int `json:"round"`
}

// round returns the round sealed in the call's state, 0 on a first call.
func round(c *kadu.Call) int {
	var st roundState
	if ok, err := c.State(&st); !ok || err != nil {
		return 0
	}
	return st.Round
}

// ask answers input_required for reqs; the client's next call carries
// their answers and round.
func ask(round int, reqs map[string]kadu.InputRequest) (*kadu.Result, error) {
	return nil, kadu.InputRequired(reqs, roundState{Round: round})
}

// answers returns the client's response to every key in keys, or nil when
// one is missing or is not a JSON object: responses come from the client,
// and a malformed one is asked for again.
func answers(c *kadu.Call, keys ...string) map[string]map[string]any {
	out := make(map[string]map[string]any, len(keys))
	for _, k := range keys {
		var v map[string]any
		if ok, err := c.InputResponse(k, &v); !ok || err != nil || v == nil {
			return nil
		}
		out[k] = v
	}
	return out
}

func describe(a map[string]map[string]any) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// form is a form elicitation whose answer is an object of properties.
func form(message string, properties map[string]any, required ...string) kadu.InputRequest {
	if required == nil {
		required = []string{}
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": properties, "required": required})
	if err != nil {
		panic(err) // fixed fixtures: a bug, caught by the tests
	}
	return kadu.Elicit(message, schema)
}

// sample asks the client to sample an LLM with one user message.
func sample(text string, maxTokens int) kadu.InputRequest {
	return kadu.InputRequest{Method: kadu.MethodSample, Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}},
		"maxTokens": maxTokens,
	}}
}

// listRoots asks the client for its roots.
func listRoots() kadu.InputRequest {
	return kadu.InputRequest{Method: kadu.MethodListRoots, Params: map[string]any{}}
}

func stringProp(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

func nameForm(message string) kadu.InputRequest {
	return form(message, map[string]any{"name": map[string]any{"type": "string"}}, "name")
}

// oneRound asks for one input, then completes with what the client sent,
// saying "state-ok" when the call carried the state of the first round.
func oneRound(key string, req kadu.InputRequest) handler {
	return func(c *kadu.Call, _ json.RawMessage) (*kadu.Result, error) {
		a := answers(c, key)
		if a == nil {
			return ask(1, map[string]kadu.InputRequest{key: req})
		}
		status := ""
		if round(c) == 1 {
			status = "state-ok: "
		}
		return textResult(status + "input received: " + describe(a))
	}
}

// inputTools are the tools that need the client.
func inputTools() []kadu.Feature {
	sep1034 := form("Please review and update the form fields with defaults", map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	})
	option := func(value, title string) map[string]any { return map[string]any{"const": value, "title": title} }
	sep1330 := form("Please select options from the enum fields", map[string]any{
		"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": []any{
			option("value1", "First Option"), option("value2", "Second Option"), option("value3", "Third Option"),
		}},
		"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
			"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
			"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
			"items": map[string]any{"anyOf": []any{
				option("value1", "First Choice"), option("value2", "Second Choice"), option("value3", "Third Choice"),
			}}},
	})
	confirm := form("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")

	return []kadu.Feature{
		fixture("test_sampling", "Asks the client to sample an LLM.",
			json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
			callSampling, "sampling"),
		fixture("test_elicitation", "Asks the user for input.",
			json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
			callElicitation, "elicitation"),
		fixture("test_elicitation_sep1034_defaults", "Elicits a form with defaults for every primitive type (SEP-1034).", nil,
			oneRound("form", sep1034), "elicitation"),
		fixture("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330).", nil,
			oneRound("form", sep1330), "elicitation"),
		fixture("test_missing_capability", "Needs sampling: a client that does not declare it gets -32021.", nil,
			oneRound("answer", sample("Say something", 10)), "sampling"),
		fixture("test_streaming_elicitation", "Asks the user for input (answered as input_required, never on a stream).", nil,
			oneRound("answer", form("Anything to add?", map[string]any{"answer": stringProp("Your answer")})), "elicitation"),

		// SEP-2322 multi round-trip requests.
		fixture("test_input_required_result_elicitation", "Round 1 elicits a name; round 2 greets.", nil,
			callGreeting, "elicitation"),
		fixture("test_input_required_result_sampling", "Round 1 asks the client to sample; round 2 returns its text.", nil,
			oneRound("capital_question", sample("What is the capital of France?", 100)), "sampling"),
		fixture("test_input_required_result_list_roots", "Round 1 asks for the client's roots; round 2 lists them.", nil,
			oneRound("client_roots", listRoots()), "roots"),
		fixture("test_input_required_result_request_state", "Round-trips an integrity-protected requestState.", nil,
			oneRound("confirm", confirm), "elicitation"),
		fixture("test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots at once.", nil,
			callMultipleInputs, "elicitation", "sampling", "roots"),
		fixture("test_input_required_result_multi_round", "Two elicitation rounds with an evolving requestState.", nil,
			callMultiRound, "elicitation"),
		fixture("test_input_required_result_tampered_state", "Refuses a tampered requestState with -32602 (the host checks it).", nil,
			oneRound("confirm", confirm), "elicitation"),
		// No capability required: it asks only for what the client declared.
		fixture("test_input_required_result_capabilities", "Asks only for the input the client declared it can give.", nil,
			callCapabilities),
	}
}

func callSampling(c *kadu.Call, raw json.RawMessage) (*kadu.Result, error) {
	var args struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(raw, &args) // the host validated them against the schema
	if a := answers(c, "sampling"); a != nil {
		content, _ := a["sampling"]["content"].(map[string]any)
		return textResult(fmt.Sprintf("LLM response: %v", content["text"]))
	}
	return ask(1, map[string]kadu.InputRequest{"sampling": sample(args.Prompt, 100)})
}

func callElicitation(c *kadu.Call, raw json.RawMessage) (*kadu.Result, error) {
	var args struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &args)
	if a := answers(c, "user_info"); a != nil {
		return textResult(fmt.Sprintf("User response: action=%v, content=%s", a["user_info"]["action"], describe(a)))
	}
	return ask(1, map[string]kadu.InputRequest{"user_info": form(args.Message, map[string]any{
		"username": stringProp("User's response"),
		"email":    stringProp("User's email address"),
	}, "username", "email")})
}

// callGreeting asks for a name until it gets one, then greets.
func callGreeting(c *kadu.Call, _ json.RawMessage) (*kadu.Result, error) {
	if a := answers(c, "user_name"); a != nil {
		if content, ok := a["user_name"]["content"].(map[string]any); ok {
			if name, ok := content["name"].(string); ok {
				return textResult("Hello, " + name + "!")
			}
		}
	}
	// Missing or malformed answer: ask again.
	return ask(1, map[string]kadu.InputRequest{"user_name": nameForm("What is your name?")})
}

func callMultipleInputs(c *kadu.Call, _ json.RawMessage) (*kadu.Result, error) {
	if a := answers(c, "user_name", "greeting", "client_roots"); a != nil {
		return textResult("All inputs received: " + describe(a))
	}
	return ask(1, map[string]kadu.InputRequest{
		"user_name":    nameForm("What is your name?"),
		"greeting":     sample("Generate a greeting", 50),
		"client_roots": listRoots(),
	})
}

// callMultiRound asks step 1, then step 2 with a new state, then
// completes; an answer missing from a round asks that round again.
func callMultiRound(c *kadu.Call, _ json.RawMessage) (*kadu.Result, error) {
	step2 := map[string]kadu.InputRequest{"step2": form("Step 2: What is your favorite color?",
		map[string]any{"color": map[string]any{"type": "string"}}, "color")}
	switch r := round(c); {
	case r == 1 && answers(c, "step1") != nil:
		return ask(2, step2)
	case r == 2 && answers(c, "step2") != nil:
		return textResult("Both rounds completed: " + describe(answers(c, "step2")))
	case r == 2:
		return ask(2, step2)
	}
	return ask(1, map[string]kadu.InputRequest{"step1": nameForm("Step 1: What is your name?")})
}

// callCapabilities asks only through the capabilities the client declared
// (SEP-2322 capability check), so it never earns a -32021.
func callCapabilities(c *kadu.Call, _ json.RawMessage) (*kadu.Result, error) {
	got := map[string]map[string]any{}
	for _, k := range []string{"user_name", "greeting", "client_roots"} {
		if a := answers(c, k); a != nil {
			got[k] = a[k]
		}
	}
	if len(got) > 0 {
		return textResult("Inputs received: " + describe(got))
	}
	reqs := map[string]kadu.InputRequest{}
	if c.HasCapability("elicitation") {
		reqs["user_name"] = nameForm("What is your name?")
	}
	if c.HasCapability("sampling") {
		reqs["greeting"] = sample("Generate a greeting", 50)
	}
	if c.HasCapability("roots") {
		reqs["client_roots"] = listRoots()
	}
	if len(reqs) == 0 {
		return textResult("The client declared no capability to ask through.")
	}
	return ask(1, reqs)
}
