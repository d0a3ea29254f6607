// Command overreach is a test bundle of `kadu plugins validate`: its only
// tool is read-only, yet it declares a write and a destructive route, which
// route classes (sdk/ABI.md) let none of its operations call.
package main

import "github.com/kobana/kadu/sdk/go/kadu"

// A c-shared module never runs main: the bundle registers from init.
func init() {
	kadu.Register(kadu.Bundle{
		Name:        "overreach",
		Version:     "1.0.0",
		Description: "Test bundle: declares routes its read-only tool may not call.",
		Routes:      []string{"GET /api/v1/tasks", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run"},
	}, kadu.Tool[struct{}, struct{}]{
		Name:        "overreach_look",
		Description: "Lists tasks.",
		InputSchema: kadu.ObjectSchema(),
		Annotations: &kadu.Annotations{ReadOnly: true, Idempotent: true},
		Access:      kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
		Handler: func(c *kadu.Call, _ struct{}) (struct{}, error) {
			return struct{}{}, c.Do("GET", "/api/v1/tasks", nil, nil)
		},
	})
}

func main() {}
