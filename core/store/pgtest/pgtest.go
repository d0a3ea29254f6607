package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bounds on every wait.
const (
	initdbTimeout = 60 * time.Second // initdb of an empty cluster takes under a second here
	readyTimeout  = 30 * time.Second // from spawning postgres to accepting connections
	stopTimeout   = 10 * time.Second // fast shutdown, then SIGKILL
	startAttempts = 3                // a free port can be taken between probing and binding
)

// dirPrefix names the temporary directories of clusters, so that Start can
// find those left behind by killed test processes.
const dirPrefix = "kadu-pgtest-"

// Cluster is a running PostgreSQL server for tests (or the external server
// PGTEST_DSN names).
//
// A Cluster is safe for concurrent use: tests running in parallel may create
// and drop databases at once. Stop stops the server and removes its
// directory; the Cluster is unusable afterwards.
type Cluster struct {
	// fixed at Start
	base    url.URL // DSN of the "postgres" database; Path is replaced per database
	dir     string  // "" for an external server
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the postmaster has exited
	stopped sync.Once

	mu    sync.Mutex // guards admin and seq
	admin *pgx.Conn
	seq   int
}

// Start starts a new cluster (or connects to PGTEST_DSN). ctx bounds the
// start; the cluster lives until Stop.
func Start(ctx context.Context) (*Cluster, error) {
	if dsn := os.Getenv("PGTEST_DSN"); dsn != "" {
		return external(ctx, dsn)
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	reapStale()

	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{dir: dir}
	if err := c.start(ctx, bin); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	if err := os.WriteFile(filepath.Join(c.dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	cred, err := serverCredential(c.dir)
	if err != nil {
		return err
	}
	data := filepath.Join(c.dir, "data")

	initCtx, cancel := context.WithTimeout(ctx, initdbTimeout)
	defer cancel()
	initdb := exec.CommandContext(initCtx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: %s: %w\n%s", strings.Join(initdb.Args, " "), err, out)
	}

	var lastErr error
	for range startAttempts {
		port, err := freePort()
		if err != nil {
			return err
		}
		lastErr = c.spawn(ctx, bin, data, port, cred)
		if lastErr == nil {
			return nil
		}
		if !errors.Is(lastErr, errPortTaken) {
			return lastErr
		}
	}
	return lastErr
}

var errPortTaken = errors.New("pgtest: port taken")

// spawn runs postgres on port and waits until it accepts connections.
func (c *Cluster) spawn(ctx context.Context, bin, data string, port int, cred *syscall.Credential) error {
	logPath := filepath.Join(c.dir, fmt.Sprintf("postgres-%d.log", port))
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = serverProcAttr(cred)
	exited := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that forked the
		// child exits, not the process: keep this goroutine on its thread
		// until the postmaster is gone. The thread ends with the goroutine.
		runtime.LockOSThread()
		defer close(exited)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // a server stopped by Stop exits non-zero
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: starting %s: %w", cmd.Path, err)
	}
	c.cmd, c.exited = cmd, exited

	c.base = url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	deadline := time.Now().Add(readyTimeout)
	for {
		connCtx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(connCtx, c.base.String())
		cancel()
		if err == nil {
			c.admin = conn
			return nil
		}
		select {
		case <-exited:
			c.cmd, c.exited = nil, nil
			log, _ := os.ReadFile(logPath)
			if strings.Contains(string(log), "could not bind") || strings.Contains(string(log), "already in use") {
				return errPortTaken
			}
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", log)
		case <-ctx.Done():
			return fmt.Errorf("pgtest: waiting for postgres: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres not ready after %s: %w\n%s", readyTimeout, err, log)
		}
	}
}

// external uses the server at dsn: databases are created there.
func external(ctx context.Context, dsn string) (*Cluster, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("pgtest: PGTEST_DSN must be a postgres:// URL")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pgtest: connecting to PGTEST_DSN: %w", err)
	}
	return &Cluster{base: *u, admin: conn}, nil
}

// Stop stops the server and removes its directory (for an external server:
// closes the admin connection). It is safe to call more than once.
func (c *Cluster) Stop() error {
	var err error
	c.stopped.Do(func() {
		c.mu.Lock()
		if c.admin != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = c.admin.Close(ctx)
			cancel()
			c.admin = nil
		}
		c.mu.Unlock()
		if c.cmd != nil {
			_ = c.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
			select {
			case <-c.exited:
			case <-time.After(stopTimeout):
				_ = c.cmd.Process.Kill()
				select {
				case <-c.exited:
				case <-time.After(stopTimeout):
					err = fmt.Errorf("pgtest: postgres (pid %d) did not exit", c.cmd.Process.Pid)
				}
			}
		}
		if c.dir != "" {
			err = errors.Join(err, os.RemoveAll(c.dir))
		}
	})
	return err
}

// DSN returns the URL of database name on the cluster.
func (c *Cluster) DSN(name string) string {
	u := c.base
	u.Path = "/" + name
	return u.String()
}

// CreateDatabase creates an empty database (from template0) and returns its
// name and DSN.
func (c *Cluster) CreateDatabase(ctx context.Context) (name, dsn string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admin == nil {
		return "", "", errors.New("pgtest: cluster stopped")
	}
	c.seq++
	name = fmt.Sprintf("kadu_test_%d_%d", os.Getpid(), c.seq)
	if _, err := c.admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", "", fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return name, c.DSN(name), nil
}

// DropDatabase drops database name, disconnecting its sessions.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admin == nil {
		return errors.New("pgtest: cluster stopped")
	}
	if _, err := c.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: dropping database %s: %w", name, err)
	}
	return nil
}

// New starts a cluster for tb and stops it in tb.Cleanup, which runs even
// when the test fails. It fails tb (never skips) if PostgreSQL cannot start.
func New(tb testing.TB) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), initdbTimeout+readyTimeout)
	defer cancel()
	c, err := Start(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// NewDatabase creates a database for tb, drops it in tb.Cleanup and returns
// its DSN. Register cleanups that close connections to it after calling
// NewDatabase, so that they run first.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, dsn, err := c.CreateDatabase(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.DropDatabase(ctx, name); err != nil {
			tb.Error(err)
		}
	})
	return dsn
}

// findBinDir returns the directory holding initdb and postgres.
func findBinDir() (string, error) {
	candidates := []string{os.Getenv("PGTEST_BINDIR"), "/usr/lib/postgresql/15/bin"}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	return firstBinDir(candidates)
}

func firstBinDir(candidates []string) (string, error) {
	var tried []string
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		tried = append(tried, dir)
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("pgtest: PostgreSQL server binaries (initdb, postgres) not found in %s or PATH: "+
		"install PostgreSQL 15 (Debian: apt-get install postgresql-15), or set PGTEST_BINDIR to their directory, "+
		"or PGTEST_DSN to a server's postgres:// URL", strings.Join(tried, ", "))
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// serverCredential returns the identity initdb and postgres run as: the
// postgres user when we are root (both refuse root), else ours (nil). It
// gives that user the directory.
func serverCredential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and initdb refuses root: need a postgres user to run it as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: postgres user ids: %w", err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// reapStale removes the directories of clusters whose test process is gone
// (killed before Stop). The parent-death signal has already stopped their
// servers; a directory whose server still runs is left alone.
func reapStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		if alive(filepath.Join(dir, "owner")) || alive(filepath.Join(dir, "data", "postmaster.pid")) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "owner")); err != nil {
			continue // not ours, or still being created
		}
		_ = os.RemoveAll(dir)
	}
}

// alive reports whether the pid on the first line of file names a running
// process (a zombie is not running).
func alive(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return false
	}
	return processAlive(pid)
}

// processAlive reports whether pid runs. On Linux a zombie (exited, not yet
// reaped: common in containers whose init does not reap) counts as gone.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill
	}
	// "pid (comm) S …": the state follows the last ')'.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}
