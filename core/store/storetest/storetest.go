// Package storetest is the behavioural test suite of core/store. Every
// back-end runs all of it (SQL is written once for both databases): core/store's sqlite_test.go and
// postgres_test.go each call Run once.
//
// It must not: reach into a back-end (it uses the public API of store, plus
// Writer() for the placeholder check), share a database between tests, or
// depend on the order tests run in.
package storetest

import (
	"testing"

	"github.com/kobana/kadu/core/store"
)

// Opener returns a new, empty, migrated DB for t and closes it in t.Cleanup.
// It is called once per test, from parallel tests.
type Opener func(t *testing.T) *store.DB

type suiteTest struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}

// Run runs every test of the suite as a parallel subtest of t, each on its
// own database from open.
func Run(t *testing.T, open Opener) {
	tests := []suiteTest{
		{"Placeholders", testPlaceholders},
		{"InTx", testInTx},
		{"EnsureOrg", testEnsureOrg},
		{"EnsureOrgConcurrent", testEnsureOrgConcurrent},
		{"TaskCRUD", testTaskCRUD},
		{"TaskInvalidJSON", testTaskInvalidJSON},
		{"TaskSearch", testTaskSearch},
		{"TaskConcurrentUpdates", testTaskConcurrentUpdates},
		{"TaskPagination", testTaskPagination},
		{"TaskSoftDelete", testTaskSoftDelete},
		{"ExecutionCreateGet", testExecutionCreateGet},
		{"ExecutionCreateNotFound", testExecutionCreateNotFound},
		{"ExecutionListFilters", testExecutionListFilters},
		{"ExecutionPagination", testExecutionPagination},
		{"ExecutionSoftDelete", testExecutionSoftDelete},
		{"StateMachine", testStateMachine},
		{"TransitionBookkeeping", testTransitionBookkeeping},
		{"TransitionFromList", testTransitionFromList},
		{"TransitionConcurrent", testTransitionConcurrent},
		{"StartExecutionLimit", testStartExecutionLimit},
		{"ExpireWaiting", testExpireWaiting},
		{"ExpireWaitingConcurrent", testExpireWaitingConcurrent},
		{"CostAndUsage", testCostAndUsage},
		{"Steps", testSteps},
		{"IdempotencyConcurrentBegin", testIdempotencyConcurrentBegin},
		{"IdempotencyOneExecutionPerKey", testIdempotencyOneExecutionPerKey},
		{"IdempotencyReplayAndMismatch", testIdempotencyReplayAndMismatch},
		{"IdempotencyAbandon", testIdempotencyAbandon},
		{"IdempotencyExpiry", testIdempotencyExpiry},
		{"OrgIsolation", testOrgIsolation},
		{"PurgeDeleted", testPurgeDeleted},
	}
	tests = append(tests, fileTests...)
	tests = append(tests, webhookTests...)
	tests = append(tests, approvalTests...)
	tests = append(tests, leaseTests...)
	tests = append(tests, auditTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}
