package store

import "errors"

// Errors callers test with errors.Is. The store wraps them with context
// ("task tsk_…: store: not found"), never replaces them.
var (
	// ErrNotFound: no such row in the caller's organisation, or it was
	// soft-deleted. Another organisation's row is also ErrNotFound.
	ErrNotFound = errors.New("store: not found")

	// ErrConflict: the row is not in a state that allows the change (an
	// execution transition from a status not allowed, deleting a
	// non-terminal execution, a lost compare-and-set race) or a unique key
	// is taken. core/api answers 409 invalid_state.
	ErrConflict = errors.New("store: conflict")

	// ErrActiveLimit: StartExecution found the organisation already running
	// as many executions as its plan allows; the execution stays queued.
	ErrActiveLimit = errors.New("store: active execution limit reached")

	// ErrIdempotencyInFlight: the first request with this key has not
	// finished. core/api answers 409 idempotency_key_in_use.
	ErrIdempotencyInFlight = errors.New("store: idempotency key in flight")

	// ErrIdempotencyMismatch: the key was used with another method, route or
	// body digest. core/api answers 422 idempotency_key_reused.
	ErrIdempotencyMismatch = errors.New("store: idempotency key reused with other parameters")
)
