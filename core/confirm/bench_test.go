package confirm

import (
	"encoding/json"
	"testing"

	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store/storetest"
)

// go test -run XXX -bench . -benchmem ./core/confirm

func BenchmarkSealOpen(b *testing.B) {
	r := ring(b, testKey(2), testKey(1))
	old := ring(b, testKey(1))
	bind, err := newBinding(alice, "kadu_tasks_run", json.RawMessage(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","input":{"period":"2026-03"}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			c, _ := newClaims(bind, t0, DefaultStateTTL)
			if _, err := r.seal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	c, _ := newClaims(bind, t0, DefaultStateTTL)
	s, _ := r.seal(c)
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.open(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A state sealed with the second key of the ring tries the first one.
	sOld, _ := old.seal(c)
	b.Run("open with the second key", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.open(sOld); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDescribe(b *testing.B) {
	args := json.RawMessage(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","input":{"period":"2026-03"},"input_file_ids":["file_1","file_2"]}`)
	for b.Loop() {
		Describe("kadu_tasks_run", "Run a task", args, "pt")
	}
}

// BenchmarkCallTool measures the confirmation steps on SQLite, behind the
// Catalog interface (no HTTP): the first call that asks (argument check,
// task lookup, sealing), the accepted retry that runs the fake tool once
// (claim, run, record), and the first call that creates an approval.
func BenchmarkCallTool(b *testing.B) {
	h := newHarness(b, storetest.Backends()[0])
	tools, _ := h.next.Tools(b.Context(), alice)
	tool := &tools[0]
	caps := map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`)}
	form := mcp.ClientContext{Era: mcp.Era2026, Capabilities: caps}
	args := json.RawMessage(h.runArgs())
	b.Run("ask", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.conf.CallTool(b.Context(), alice, &mcp.ToolCall{Tool: tool, Arguments: args, Client: form}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ask then accept", func(b *testing.B) {
		for b.Loop() {
			res, err := h.conf.CallTool(b.Context(), alice, &mcp.ToolCall{Tool: tool, Arguments: args, Client: form})
			if err != nil {
				b.Fatal(err)
			}
			_, err = h.conf.CallTool(b.Context(), alice, &mcp.ToolCall{Tool: tool, Arguments: args, Client: form,
				RequestState: res.RequestState, InputResponses: map[string]json.RawMessage{confirmKey: json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("approval link", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.conf.CallTool(b.Context(), alice, &mcp.ToolCall{Tool: tool, Arguments: args, Client: mcp.ClientContext{Era: mcp.Era2025}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
