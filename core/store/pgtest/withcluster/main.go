// Command withcluster runs a command with one throwaway PostgreSQL cluster
// for all of it: it starts the cluster (package pgtest), runs the command
// with PGTEST_DSN naming the cluster's postgres database, stops the cluster
// and exits with the command's status. `go tool task test` runs the test
// suite under it, so that every package's tests create their databases in
// one server instead of each starting its own:
//
//	go run ./core/store/pgtest/withcluster -- go test ./...
//
// With PGTEST_DSN already set it only runs the command. It must not be
// used outside tests: the cluster trusts every local connection and keeps
// nothing (fsync off).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/kobana/kadu/core/store/pgtest"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withcluster -- COMMAND [ARG...]")
		return 2
	}
	// ^C reaches the command through the process group; this process
	// waits for it to end and then stops the cluster.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)

	if os.Getenv("PGTEST_DSN") != "" {
		return command(args, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cluster, err := pgtest.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "withcluster: %v\n", err)
		return 1
	}
	code := command(args, []string{"PGTEST_DSN=" + cluster.DSN("postgres")})
	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "withcluster: stopping the cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// command runs args with env added to this process's environment and
// returns its exit status.
func command(args, env []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "withcluster: %v\n", err)
		return 1
	}
}
