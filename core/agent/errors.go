package agent

import "errors"

var (
	// ErrCostCap is wrapped by the error Sink.Charge returns when a cost cap
	// is crossed.
	ErrCostCap = errors.New("cost cap exceeded")
	// ErrProtocol is wrapped by the error the HTTP runner returns when the
	// agent service answers outside the protocol (bad JSON, unknown status,
	// oversized body, an unexpected HTTP status).
	ErrProtocol = errors.New("agent service protocol violation")
	// ErrUnavailable is wrapped by the error the HTTP runner returns when the
	// agent service stayed unreachable or overloaded through every retry. The
	// run may be retried later.
	ErrUnavailable = errors.New("agent service unavailable")
	// ErrBadResume is wrapped by the error Run returns when Job.Resume and
	// Job.State do not belong together: a resume without state, an answer to
	// a step that is not waiting, or a playbook changed since the pause.
	ErrBadResume = errors.New("resume does not match the paused execution")
)
