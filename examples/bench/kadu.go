package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Budgets of the waits around a Kadu server.
const (
	startBudget     = 90 * time.Second // serve → /readyz, a cold start compiling every bundle included
	executionBudget = 60 * time.Second // the example task's run, queued to succeeded
)

// echoPoolSize is the echo bundle's pool: the load's concurrency, so a
// warmed pool serves every call without instantiating (as the issue's
// measurement was made).
const echoPoolSize = 16

// benchConfig is the configuration of the Kadu server of the echo rows:
// the built-in defaults (the four first-party bundles as shipped, pinned
// and embedded in the binary), plus the echo bundle, pinned to the build
// the harness just made. Nothing else changes; the plan's rate limit and
// the compilation cache come from the environment (kaduEnv). The
// kadu_executions_get rows run without it, on the built-in configuration.
const benchConfig = `# Written by examples/bench for one run; not for deployment.
plugins:
  bundles:
    echo:
      enabled: true
      required: true
      path: %q
      sha256: %s
      routes: []
      isolation: per_org
      pool_size: %d
`

// writeBenchConfig writes the configuration file and returns its path.
func writeBenchConfig(dir, echoWasm, echoSHA string) (string, error) {
	path := filepath.Join(dir, "kadu-bench.yaml")
	body := fmt.Sprintf(benchConfig, echoWasm, echoSHA, echoPoolSize)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		return "", fmt.Errorf("writing the bench configuration: %w", err)
	}
	return path, nil
}

// kaduEnv lifts the developer plan's rate limit (600 requests a minute,
// which the load passes in half a second) and adds extra.
func kaduEnv(extra ...string) []string {
	return append([]string{"KADU_PLANS__DEVELOPER__REQUESTS_PER_MINUTE=1000000000"}, extra...)
}

// A kaduServer is a running `kadu serve`.
type kaduServer struct {
	*proc
	bin       string
	args      []string // --config, --data-dir, --addr, --admin-addr: what kadu token needs too
	env       []string
	base      string // http://addr
	adminBase string // http://admin_addr
	ready     time.Duration
}

// startKadu starts `kadu serve` on free loopback ports and waits until
// /readyz answers 200.
func startKadu(ctx context.Context, ps *procs, name, bin, config, dataDir string, env []string) (*kaduServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"--data-dir", dataDir, "--addr", addr, "--admin-addr", admin}
	if config != "" {
		args = append([]string{"--config", config}, args...)
	}
	pr, err := ps.start(name, bin, env, append([]string{"serve", "--log-level", "warn"}, args...)...)
	if err != nil {
		return nil, err
	}
	k := &kaduServer{proc: pr, bin: bin, args: args, env: env, base: "http://" + addr, adminBase: "http://" + admin}
	if k.ready, err = pr.waitHTTP(ctx, k.adminBase+"/readyz", startBudget); err != nil {
		return nil, err
	}
	return k, nil
}

// token mints an access token for org_dev (the embedded issuer's default
// organisation, owner) with `kadu token` on the server's configuration and
// data directory.
func (k *kaduServer) token(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"token", "--ttl", "2h"}, k.args...)...)
	cmd.Env = append(os.Environ(), k.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("kadu token: %w: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// rest calls the REST API with token and decodes a JSON object answer.
func (k *kaduServer) rest(ctx context.Context, token, method, path string, body any, want int) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.base+"/api/v1"+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, abbrev(raw))
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", method, path, err, abbrev(raw))
	}
	return out, nil
}

// exampleTask is the example task every organisation is given, which the
// built-in runner completes without outside services.
const exampleTask = "Resumo de extrato"

// succeededExecution runs the example task through the REST API, as
// docs/benchmarks.md's wrk recipe does, and returns the id of its
// execution once it has succeeded.
func (k *kaduServer) succeededExecution(ctx context.Context, token string) (string, error) {
	list, err := k.rest(ctx, token, http.MethodGet, "/tasks?limit=100", nil, http.StatusOK)
	if err != nil {
		return "", err
	}
	data, _ := list["data"].([]any)
	var taskID string
	var example any
	for _, raw := range data {
		t, _ := raw.(map[string]any)
		if t["name"] != exampleTask {
			continue
		}
		schema, _ := t["input_schema"].(map[string]any)
		if ex, _ := schema["examples"].([]any); len(ex) > 0 {
			taskID, _ = t["id"].(string)
			example = ex[0]
		}
	}
	if taskID == "" {
		return "", fmt.Errorf("no example task %q with an input example among the organisation's %d tasks", exampleTask, len(data))
	}
	exe, err := k.rest(ctx, token, http.MethodPost, "/tasks/"+taskID+"/run", map[string]any{"input": example}, http.StatusAccepted)
	if err != nil {
		return "", err
	}
	id, _ := exe["id"].(string)
	deadline := time.Now().Add(executionBudget)
	for {
		e, err := k.rest(ctx, token, http.MethodGet, "/executions/"+id, nil, http.StatusOK)
		if err != nil {
			return "", err
		}
		switch s := e["status"]; s {
		case "succeeded":
			return id, nil
		case "queued", "running":
		default:
			return "", fmt.Errorf("execution %s of %q ended %v: %v", id, exampleTask, s, e["failure"])
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("execution %s of %q still %v after %s", id, exampleTask, e["status"], executionBudget)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// bundleMemory is a bundle's instances as GET /admin/plugins shows them.
type bundleMemory struct {
	Instances     int64
	Idle          int
	MemoryBytes   int64 // charged to the budget: overheads plus committed linear memory
	Overhead      int64 // the fixed charge per instance
	Evictions     int64 // idle instances closed for room, all bundles
	BusyRefusals  int64
	PerInstanceLM float64 // linear memory per instance
}

// since makes the server-wide counters of m count from before: what the
// load caused, not the server's start.
func (m bundleMemory) since(before bundleMemory) bundleMemory {
	m.Evictions -= before.Evictions
	m.BusyRefusals -= before.BusyRefusals
	return m
}

// pluginMemory reads GET /admin/plugins for bundle.
func (k *kaduServer) pluginMemory(ctx context.Context, bundle string) (bundleMemory, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.adminBase+"/admin/plugins", nil)
	if err != nil {
		return bundleMemory{}, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return bundleMemory{}, fmt.Errorf("GET /admin/plugins: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Bundles []struct {
			Name          string `json:"name"`
			Instances     int64  `json:"instances"`
			IdleInstances int    `json:"idle_instances"`
			MemoryBytes   int64  `json:"memory_bytes"`
		} `json:"bundles"`
		Memory struct {
			InstanceOverhead int64 `json:"instance_overhead"`
			Evictions        int64 `json:"evictions"`
			BusyRefusals     int64 `json:"busy_refusals"`
		} `json:"memory"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return bundleMemory{}, fmt.Errorf("GET /admin/plugins: %w", err)
	}
	for _, b := range body.Bundles {
		if b.Name != bundle {
			continue
		}
		m := bundleMemory{Instances: b.Instances, Idle: b.IdleInstances, MemoryBytes: b.MemoryBytes,
			Overhead: body.Memory.InstanceOverhead, Evictions: body.Memory.Evictions, BusyRefusals: body.Memory.BusyRefusals}
		if b.Instances > 0 {
			m.PerInstanceLM = float64(b.MemoryBytes-b.Instances*m.Overhead) / float64(b.Instances)
		}
		return m, nil
	}
	return bundleMemory{}, fmt.Errorf("GET /admin/plugins lists no bundle %q", bundle)
}
