package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// stopTimeout bounds a server's graceful stop before it is killed.
const stopTimeout = 10 * time.Second

// procs are the servers the harness started; stopAll stops every one of
// them, on success and on failure.
type procs struct {
	dir      string // where each server's log goes
	mu       sync.Mutex
	list     []*proc
	cleanups []func() // run after the processes stop (the PostgreSQL cluster)
}

// A proc is one server process and its log.
type proc struct {
	name    string
	log     string
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
}

// start runs bin with args and extra environment, its output to
// <dir>/<name>.log.
func (p *procs) start(name, bin string, env []string, args ...string) (*proc, error) {
	logPath := filepath.Join(p.dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childProcAttr()
	pr := &proc{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	pr.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	go func() {
		pr.waitErr = cmd.Wait()
		close(pr.exited)
	}()
	p.mu.Lock()
	p.list = append(p.list, pr)
	p.mu.Unlock()
	return pr, nil
}

// stop asks the process to stop (SIGTERM), waits stopTimeout, then kills
// it. Stopping a process that has exited is a no-op.
func (pr *proc) stop() {
	select {
	case <-pr.exited:
		return
	default:
	}
	_ = pr.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-pr.exited:
	case <-time.After(stopTimeout):
		_ = pr.cmd.Process.Kill()
		<-pr.exited
	}
}

// onStop registers f to run in stopAll, after the processes.
func (p *procs) onStop(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// stopAll stops every process started, the last first, then runs the
// onStop functions. Calling it again stops what started since.
func (p *procs) stopAll() {
	p.mu.Lock()
	list, cleanups := p.list, p.cleanups
	p.list, p.cleanups = nil, nil
	p.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].stop()
	}
	for _, f := range cleanups {
		f()
	}
}

// waitHTTP polls url until it answers 200 and returns how long after the
// process started that was. It fails when the process exits or budget
// passes first, with the end of the process's log.
func (pr *proc) waitHTTP(ctx context.Context, url string, budget time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(pr.started), nil
			}
		}
		select {
		case <-pr.exited:
			return 0, fmt.Errorf("%s exited before %s answered 200 (%v); its log ends (--keep keeps %s):\n%s",
				pr.name, url, pr.waitErr, pr.log, logTail(pr.log))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return 0, fmt.Errorf("%s: %s did not answer 200 within %s; its log ends (--keep keeps %s):\n%s",
					pr.name, url, budget, pr.log, logTail(pr.log))
			}
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return tail(string(b), 15)
}

// freeAddr returns a loopback address with a port free now. Another
// process could take it before the server binds it; the server then
// fails to start and says so.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
