package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kobana/kadu/core/store"
)

// The life of an execution: launch it in a transaction (where the job queue
// would insert its job too), then move it through the state machine.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kadu-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := store.Open(ctx, store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(dir, "kadu.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// The organisation comes from the verified token.
	org, _, err := db.EnsureOrg(ctx, "org_acme", "free")
	if err != nil {
		log.Fatal(err)
	}
	task, err := db.CreateTask(ctx, org.ID, store.Task{
		Name:        "Conciliação",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	})
	if err != nil {
		log.Fatal(err)
	}

	var e store.Execution
	err = db.InTx(ctx, func(tx *store.Tx) error {
		e, err = tx.CreateExecution(ctx, org.ID, store.Execution{TaskID: task.ID, LaunchedBy: "usr_1"})
		// River: client.InsertTx(ctx, tx.SQL(), jobArgs{ExecutionID: e.ID}, nil)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Status)

	e, err = db.StartExecution(ctx, org.ID, e.ID, 2, nil) // plan: 2 at a time
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Status)

	e, err = db.Transition(ctx, org.ID, e.ID, []store.Status{store.StatusRunning}, store.StatusSucceeded,
		func(x *store.Execution) { x.Output = &store.Output{Summary: "3 pendências"} })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Status, e.Output.Summary)

	// Cancelling a finished execution is a conflict: core/api answers 409 invalid_state.
	_, err = db.Transition(ctx, org.ID, e.ID, []store.Status{store.StatusQueued, store.StatusRunning}, store.StatusCancelled, nil)
	fmt.Println(errors.Is(err, store.ErrConflict))
	// Output:
	// queued
	// running
	// succeeded 3 pendências
	// true
}
