package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestCluster(t *testing.T) {
	t.Setenv("PGTEST_DSN", "") // this test is about starting one, even under withcluster
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() }) // in case a check below fails first
	t.Logf("cluster started in %v", time.Since(start).Round(time.Millisecond))

	name1, dsn1, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name2, _, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if name1 == name2 {
		t.Errorf("two databases named %s", name1)
	}
	conn, err := pgx.Connect(ctx, dsn1)
	if err != nil {
		t.Fatal(err)
	}
	var fsync, version, db string
	err = conn.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('server_version'), current_database()`).
		Scan(&fsync, &version, &db)
	if err != nil {
		t.Fatal(err)
	}
	if fsync != "off" || db != name1 {
		t.Errorf("fsync = %s, database = %s; want off, %s", fsync, db, name1)
	}
	t.Logf("PostgreSQL %s", version)
	if !strings.HasPrefix(version, "15.") {
		t.Logf("note: not PostgreSQL 15 (%s); production targets 15", version)
	}

	// Dropping disconnects the sessions still on the database.
	if err := c.DropDatabase(ctx, name1); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Errorf("session survived DROP DATABASE … WITH (FORCE)")
	}
	conn.Close(ctx)
	if _, err := pgx.Connect(ctx, dsn1); err == nil {
		t.Errorf("dropped database still accepts connections")
	}

	pid := c.cmd.Process.Pid
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still there: %v", c.dir, err)
	}
	if processAlive(pid) {
		t.Errorf("postmaster %d still running after Stop", pid)
	}
	if _, _, err := c.CreateDatabase(ctx); err == nil {
		t.Errorf("CreateDatabase after Stop succeeded")
	}
}

func TestMissingBinaries(t *testing.T) {
	_, err := firstBinDir([]string{"", t.TempDir()})
	if err == nil {
		t.Fatal("no error for a directory without binaries")
	}
	for _, want := range []string{"install PostgreSQL 15", "PGTEST_BINDIR", "PGTEST_DSN"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// TestKilledTestProcess kills a test process that has a cluster running, as
// go test -timeout or a ^C would: the postmaster must go with it, and the
// next Start removes its directory.
func TestKilledTestProcess(t *testing.T) {
	t.Setenv("PGTEST_DSN", "") // this test is about starting one, even under withcluster
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperCluster$", "-test.v")
	cmd.Env = append(os.Environ(), "PGTEST_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if _, err := fmt.Sscanf(lines.Text(), "CLUSTER %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper did not report its cluster: %v", lines.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	deadline := time.Now().Add(15 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // do not leave it behind ourselves
			t.Fatalf("postmaster %d outlived its killed test process", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	reapStale()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory %s of a dead cluster not reaped: %v", dir, err)
	}
}

// TestHelperCluster is TestKilledTestProcess's child: it starts a cluster,
// reports it and waits to be killed.
func TestHelperCluster(t *testing.T) {
	if os.Getenv("PGTEST_HELPER") != "1" {
		return
	}
	c, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("CLUSTER %d %s\n", c.cmd.Process.Pid, c.dir)
	time.Sleep(time.Minute) // killed long before
	_ = c.Stop()
}
