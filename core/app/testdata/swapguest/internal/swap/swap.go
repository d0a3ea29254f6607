// Package swap is the test bundle "swap" of core/app's hot-swap test: one
// tool, swap_version, that makes one api() round trip (GET /api/v1/usage)
// and answers with the bundle's version, so a caller can tell which
// version served it. Packages v1 and v2 register it with two versions.
package swap

import "github.com/kobana/kadu/sdk/go/kadu"

// Register installs the bundle as version; call it from the main package's
// init.
func Register(version string) {
	kadu.Register(kadu.Bundle{
		Name:        "swap",
		Version:     version,
		Description: "Test bundle of core/app: answers with its own version.",
		Routes:      []string{"GET /api/v1/usage"},
	}, tool(version))
}

type out struct {
	Version string `json:"version"`
	Plan    string `json:"plan"`
}

func tool(version string) kadu.Tool[struct{}, out] {
	return kadu.Tool[struct{}, out]{
		Name:         "swap_version",
		Title:        "Swap version",
		Description:  "Returns the version of the swap bundle that served the call and the caller's plan.",
		InputSchema:  kadu.ObjectSchema(),
		OutputSchema: []byte(`{"type":"object","properties":{"version":{"type":"string"},"plan":{"type":"string"}},"required":["version","plan"]}`),
		Annotations:  &kadu.Annotations{ReadOnly: true, Idempotent: true},
		Access:       kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
		Handler: func(c *kadu.Call, _ struct{}) (out, error) {
			var usage struct {
				Plan string `json:"plan"`
			}
			if err := c.Do("GET", "/api/v1/usage", nil, &usage); err != nil {
				return out{}, err
			}
			return out{Version: version, Plan: usage.Plan}, nil
		},
	}
}
