package confirm

import (
	"maps"
	"sync"
	"testing"
	"time"
)

// countedEvents records the events a Confirmer reports.
type countedEvents struct {
	mu     sync.Mutex
	events map[string]int // "confirmation/asked", "approval/issued", …
}

func (c *countedEvents) Confirmation(e string) { c.add("confirmation/" + e) }
func (c *countedEvents) Approval(e string)     { c.add("approval/" + e) }

func (c *countedEvents) add(e string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = map[string]int{}
	}
	c.events[e]++
}

// TestMetricsEvents: each step of a confirmation an operator watches is
// reported once, under its own event.
func TestMetricsEvents(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *harness){"Events": testMetricsEvents})
}

func testMetricsEvents(t *testing.T, h *harness) {
	m := &countedEvents{}
	h.conf.metrics = m

	state := h.ask(callReq{})
	h.call(callReq{state: state, responses: accept})
	state = h.ask(callReq{})
	h.call(callReq{state: state, responses: declineIt})
	state = h.ask(callReq{})
	h.clock.Advance(DefaultStateTTL + time.Second)
	h.call(callReq{state: state, responses: accept}).wantInvalidState(t, "an expired state")
	h.call(callReq{state: statePrefix + "forged", responses: accept}).wantInvalidState(t, "a forged state")

	link := h.link(callReq{caps: capsNone})
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	link = h.link(callReq{caps: capsNone})
	h.clock.Advance(DefaultApprovalTTL)
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); err == nil {
		t.Fatal("Decide after expiry succeeded")
	}

	want := map[string]int{
		"confirmation/asked": 3, "confirmation/accepted": 1, "confirmation/declined": 1,
		"confirmation/expired": 1, "confirmation/refused": 1,
		"approval/issued": 2, "approval/approved": 1, "approval/expired": 1,
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !maps.Equal(m.events, want) {
		t.Errorf("events = %v, want %v", m.events, want)
	}
}
