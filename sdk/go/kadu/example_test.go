package kadu_test

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu"
)

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
	Plan     string `json:"plan"`
}

// A bundle registers its tools from init: in a c-shared WebAssembly module
// main is never run. This tool reads the caller's organisation from the
// API as the caller; an API error becomes an isError result on its own.
func ExampleRegister() {
	greet := kadu.Tool[greetIn, greetOut]{
		Name:        "hello_greet",
		Title:       "Greet",
		Description: "Greets someone and names the organisation's plan. Use it to say hello.",
		InputSchema: kadu.ObjectSchema(kadu.Property{Name: "name", Schema: `{"type":"string","minLength":1}`, Required: true}),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"},"plan":{"type":"string"}},` +
			`"required":["greeting","plan"]}`),
		Annotations: &kadu.Annotations{ReadOnly: true, Idempotent: true},
		Access:      kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
		Handler: func(c *kadu.Call, in greetIn) (greetOut, error) {
			var usage struct {
				Plan string `json:"plan"`
			}
			if err := c.Do("GET", "/api/v1/usage", nil, &usage); err != nil {
				return greetOut{}, err
			}
			kadu.Log.Info("greeted", "org_id", c.Caller().OrgID)
			return greetOut{Greeting: "Hello, " + in.Name + "!", Plan: usage.Plan}, nil
		},
	}
	// In the bundle's main package:
	//
	//	func init() { kadu.Register(bundle, greet) }
	//	func main() {}
	_ = kadu.Bundle{Name: "hello", Version: "1.0.0", Routes: []string{"GET /api/v1/usage"}}
	_ = greet
}

// InputRequired asks the client before acting, and the retry carries the
// answer and the state the handler chose to keep.
func ExampleInputRequired() {
	_ = func(c *kadu.Call, _ struct{}) (string, error) {
		var st struct{ TaskID string }
		if again, err := c.State(&st); err != nil || !again {
			if !c.HasCapability("elicitation") {
				return "", kadu.ToolError("This client cannot answer questions: pass month as an argument instead.")
			}
			return "", kadu.InputRequired(map[string]kadu.InputRequest{
				"month": kadu.Elicit("Which month?", json.RawMessage(`{"type":"object","properties":{"month":{"type":"string"}},"required":["month"]}`)),
			}, struct{ TaskID string }{"tsk_…"})
		}
		var answer struct {
			Action  string `json:"action"`
			Content struct {
				Month string `json:"month"`
			} `json:"content"`
		}
		if ok, _ := c.InputResponse("month", &answer); !ok || answer.Action != "accept" {
			return "Nothing was done.", nil
		}
		return "Reconciling " + answer.Content.Month + " for " + st.TaskID, nil
	}
}

func ExampleObjectSchema() {
	fmt.Println(string(kadu.ObjectSchema(
		kadu.Property{Name: "id", Schema: `{"type":"string"}`, Required: true},
		kadu.Property{Name: "limit", Schema: `{"type":"integer","minimum":1,"maximum":100}`},
	)))
	// Output:
	// {"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"],"additionalProperties":false}
}
