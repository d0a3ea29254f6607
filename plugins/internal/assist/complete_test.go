package assist

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The test binary is a bundle whose one completion is Complete over the
// tasks list, for the template it completes (a bundle registers from init;
// sdk/go/kadu says why; the host loads no bundle that offers only
// completions).
func init() {
	kadu.Register(kadu.Bundle{Name: "assisttest", Version: "1.0.0", Routes: []string{"GET /api/v1/tasks"}},
		kadu.ResourceTemplate{URITemplate: "kobana://x/{id}", Name: "x",
			Access: kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
			Read:   func(*kadu.Call, string, map[string]string) ([]kadu.ResourceContents, error) { return nil, nil }},
		kadu.Completion{Complete: func(c *kadu.Call, req kadu.CompleteRequest) (kadu.CompleteResult, error) {
			return Complete(c, "/api/v1/tasks", IDPrefix(req.Argument.Value), ItemID)
		}})
}

// TestComplete runs Complete inside a bundle under the fake host: it asks
// the list route as the caller and turns the page into values.
func TestComplete(t *testing.T) {
	tests := []struct {
		name        string
		typed       string
		items       int
		next        string // meta.next_cursor, "" for null
		status      int
		wantValues  int
		wantTotal   int
		wantHasMore bool
	}{
		{name: "every item", items: 3, wantValues: 3, wantTotal: 3},
		{name: "by prefix, ignoring case", typed: "TSK_0000000000000000000000000000000", items: 20, wantValues: 16, wantTotal: 16},
		{name: "another page", items: 100, next: "c2", wantValues: 100, wantHasMore: true},
		{name: "none", items: 0, wantValues: 0},
		{name: "the caller may not list", status: http.StatusForbidden, wantValues: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked string
			mux := http.NewServeMux()
			mux.HandleFunc("GET /api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
				asked = r.URL.RawQuery
				if tt.status != 0 {
					w.WriteHeader(tt.status)
					fmt.Fprint(w, `{"status":403,"errors":[{"code":"forbidden"}]}`)
					return
				}
				var items []string
				for i := range tt.items {
					items = append(items, fmt.Sprintf(`{"id":"tsk_%032x","name":"t%d"}`, i, i))
				}
				next := "null"
				if tt.next != "" {
					next = `"` + tt.next + `"`
				}
				fmt.Fprintf(w, `{"data":[%s],"meta":{"next_cursor":%s,"limit":100}}`, strings.Join(items, ","), next)
			})
			b := kadutest.Native(t, &kadutest.Host{API: mux})
			out := b.Invoke(t, kadutest.Invocation{Op: "completion/complete", Params: map[string]any{
				"ref": map[string]string{"type": "ref/resource", "uri": "kobana://x/{id}"}, "argument": map[string]string{"name": "id", "value": tt.typed}}})
			if out.Status != 0 {
				t.Fatalf("status %d: %s", out.Status, out.Output)
			}
			var wire struct {
				Completion struct {
					Values  []string `json:"values"`
					Total   int      `json:"total"`
					HasMore bool     `json:"hasMore"`
				} `json:"completion"`
			}
			if err := json.Unmarshal(out.Output, &wire); err != nil {
				t.Fatalf("output %s: %v", out.Output, err)
			}
			got := wire.Completion
			if asked != "limit=100" {
				t.Errorf("query = %q, want limit=100", asked)
			}
			if len(got.Values) != tt.wantValues || got.Total != tt.wantTotal || got.HasMore != tt.wantHasMore {
				t.Errorf("= %d values, total %d, hasMore %v; want %d, %d, %v", len(got.Values), got.Total, got.HasMore,
					tt.wantValues, tt.wantTotal, tt.wantHasMore)
			}
		})
	}
}
