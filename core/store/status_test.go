package store

import (
	"slices"
	"testing"
)

func TestStatusTable(t *testing.T) {
	table := AllowedTransitions()
	for _, s := range Statuses() {
		if !s.Valid() {
			t.Errorf("%s is not Valid", s)
		}
		if s.Terminal() != (len(table[s]) == 0) {
			t.Errorf("%s: Terminal() = %v with %d moves out", s, s.Terminal(), len(table[s]))
		}
		for _, to := range Statuses() {
			if got, want := CanTransition(s, to), slices.Contains(table[s], to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, table says %v", s, to, got, want)
			}
		}
	}
	if Status("paused").Valid() || CanTransition("paused", StatusRunning) {
		t.Errorf("unknown status accepted")
	}
	// The table is a copy: changing it changes nothing.
	table[StatusSucceeded] = []Status{StatusQueued}
	if CanTransition(StatusSucceeded, StatusQueued) {
		t.Errorf("AllowedTransitions returned the live table")
	}
	if got := sqlStrings(terminalStatuses); got != `('succeeded', 'failed', 'cancelled', 'expired')` {
		t.Errorf("sqlStrings = %s", got)
	}
}
