package plugin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestSchemaCheckRemembersOnlyWhatPassed(t *testing.T) {
	s, err := compileToolSchema(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	valid, invalid := json.RawMessage(`{"id":"exe_1"}`), json.RawMessage(`{"id":7}`)

	for range 2 { // a failure is checked, and named, every time
		if err := s.check("org_a", invalid); err == nil || !strings.Contains(err.Error(), "/id") {
			t.Fatalf("check(invalid) = %v, want an error naming /id", err)
		}
	}
	if s.passed.has(passedKey("org_a", invalid)) {
		t.Fatal("a document that failed is remembered as passed")
	}
	if err := s.check("org_a", valid); err != nil {
		t.Fatalf("check(valid) = %v", err)
	}
	if !s.passed.has(passedKey("org_a", valid)) {
		t.Fatal("a document that passed is not remembered")
	}
	if s.passed.has(passedKey("org_b", valid)) {
		t.Fatal("what org_a's document passed is visible to org_b")
	}
	if err := s.check("org_a", valid); err != nil {
		t.Fatalf("check(valid) again = %v", err)
	}
}

func TestSchemaCheckStaysBounded(t *testing.T) {
	s, err := compileToolSchema(json.RawMessage(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * passedCap {
		if err := s.check("org_a", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
		if n := len(s.passed.set); n > passedCap {
			t.Fatalf("after %d documents the set holds %d, cap %d", i+1, n, passedCap)
		}
	}
}

// BenchmarkOutputCheck measures the outputSchema check of a polled
// execution: the first time validated, then remembered.
func BenchmarkOutputCheck(b *testing.B) {
	s, err := compileToolSchema(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^exe_"},` +
		`"status":{"enum":["queued","running","succeeded"]},"cost_cents":{"type":"integer","minimum":0}},"required":["id","status"]}`))
	if err != nil {
		b.Fatal(err)
	}
	doc := json.RawMessage(`{"id":"exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","status":"succeeded","cost_cents":17,` +
		`"output":{"summary":"` + strings.Repeat("resumo ", 80) + `"}}`)
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.validate(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.check("org_a", doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
