package store

import "slices"

// Status is where an execution is in its life (docs/reference/rest.md#wire-forms):
//
//	queued ──► running ──► succeeded
//	  │          ├───────► failed        (error, timeout, cost_cap_exceeded, replica_lost)
//	  │          └───────► waiting_input ──continue──► queued
//	  │                       ├──cancel──► cancelled
//	  │                       └──expires─► expired
//	  │          running ──cancel──► cancelling ──► cancelled
//	  └──cancel──► cancelled
//
// succeeded, failed, cancelled and expired are terminal.
type Status string

// Execution statuses.
const (
	StatusQueued       Status = "queued"
	StatusRunning      Status = "running"
	StatusWaitingInput Status = "waiting_input"
	StatusCancelling   Status = "cancelling"
	StatusSucceeded    Status = "succeeded"
	StatusFailed       Status = "failed"
	StatusCancelled    Status = "cancelled"
	StatusExpired      Status = "expired"
)

// Statuses returns every status, in the order of the diagram.
func Statuses() []Status {
	return []Status{StatusQueued, StatusRunning, StatusWaitingInput, StatusCancelling,
		StatusSucceeded, StatusFailed, StatusCancelled, StatusExpired}
}

// transitions is the state machine. Read-only: AllowedTransitions hands out
// copies.
var transitions = map[Status][]Status{
	StatusQueued:       {StatusRunning, StatusCancelled},
	StatusRunning:      {StatusSucceeded, StatusFailed, StatusWaitingInput, StatusCancelling},
	StatusWaitingInput: {StatusQueued, StatusCancelled, StatusExpired},
	StatusCancelling:   {StatusCancelled},
}

// AllowedTransitions returns the state machine as a table: for each status,
// the statuses an execution may move to from it. Terminal statuses have no
// entry. The map is a fresh copy; callers may keep or change it.
func AllowedTransitions() map[Status][]Status {
	m := make(map[Status][]Status, len(transitions))
	for from, to := range transitions {
		m[from] = slices.Clone(to)
	}
	return m
}

// CanTransition reports whether the state machine allows from → to.
func CanTransition(from, to Status) bool {
	return slices.Contains(transitions[from], to)
}

// Terminal reports whether s is final: succeeded, failed, cancelled or
// expired. Only terminal executions may be deleted.
func (s Status) Terminal() bool {
	return slices.Contains(terminalStatuses, s)
}

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	return slices.Contains(Statuses(), s)
}

// Active reports whether s counts against the plan's concurrency limit.
func (s Status) Active() bool {
	return s == StatusRunning || s == StatusCancelling
}

var (
	terminalStatuses = []Status{StatusSucceeded, StatusFailed, StatusCancelled, StatusExpired} // read-only
	activeStatuses   = []Status{StatusRunning, StatusCancelling}                               // read-only
)
