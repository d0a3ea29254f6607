package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kobana/kadu/core/store/pgtest"
)

// peerBudget bounds a peer's start, its build excluded.
const peerBudget = 30 * time.Second

// echoMessage is the echo tool's argument in every call.
const echoMessage = "hello, bench"

// bench is one run of the harness: what it started and what it measured.
type bench struct {
	log    *slog.Logger
	opts   options
	mode   mode
	work   string
	ps     *procs
	header string

	coldStart  time.Duration
	warmStarts []time.Duration

	echo    map[string][]loadResult // by server: kadu, mcp-go, go-sdk
	execGet map[string][]loadResult // by store: sqlite, postgres
	memory  map[string]bundleMemory // by row label
	micro   []row
}

// Names of the echo servers, in the order each round runs them.
const (
	serverKadu  = "kadu"
	serverMCPGo = "mcp-go"
	serverGoSDK = "go-sdk"
)

func (b *bench) measure(ctx context.Context) error {
	b.echo, b.execGet, b.memory = map[string][]loadResult{}, map[string][]loadResult{}, map[string]bundleMemory{}
	cache := filepath.Join(b.work, "start", "wasm-cache") // <data_dir>/wasm-cache of the start measurements
	if b.opts.only["start"] {
		if err := b.measureStart(ctx); err != nil {
			return err
		}
	}
	if !b.opts.only["echo"] && !b.opts.only["sqlite"] && !b.opts.only["postgres"] {
		return nil
	}

	// Every server shares the compilation cache the start measurements
	// filled, so only the echo bundle compiles again.
	cacheEnv := "KADU_PLUGINS__CACHE_DIR=" + cache
	if b.opts.only["echo"] {
		if err := b.measureEcho(ctx, cacheEnv); err != nil {
			return err
		}
		b.ps.stopAll() // the servers of the next rows get the cores to themselves
	}
	if b.opts.only["sqlite"] || b.opts.only["postgres"] {
		if err := b.measureExecutionsGet(ctx, cacheEnv); err != nil {
			return err
		}
	}
	return nil
}

// measureStart times `kadu serve` to the first 200 from /readyz with the
// built-in configuration (the four first-party bundles): once cold, on an
// empty data directory and compilation cache, then warm, restarted on the
// same directory.
func (b *bench) measureStart(ctx context.Context) error {
	dir := filepath.Join(b.work, "start")
	for i := range 1 + b.mode.warmStarts {
		k, err := startKadu(ctx, b.ps, fmt.Sprintf("kadu-start-%d", i), b.opts.kadu, "", dir, nil)
		if err != nil {
			return err
		}
		b.log.Info("serve → ready", "cold", i == 0, "took", k.ready.Round(time.Millisecond))
		if i == 0 {
			b.coldStart = k.ready
		} else {
			b.warmStarts = append(b.warmStarts, k.ready)
		}
		k.stop()
	}
	return nil
}

// measureEcho loads the echo tool on Kadu (on SQLite, with the echo
// bundle added to the built-in configuration) and both peers,
// alternating.
func (b *bench) measureEcho(ctx context.Context, cacheEnv string) error {
	b.log.Info("building the echo bundle and the peers")
	echoWasm := filepath.Join(b.work, "echo.wasm")
	sha, err := buildEcho(ctx, b.opts.dir, echoWasm)
	if err != nil {
		return err
	}
	config, err := writeBenchConfig(b.work, echoWasm, sha)
	if err != nil {
		return err
	}
	peers := map[string]string{serverMCPGo: "./peers/mcpgo", serverGoSDK: "./peers/gosdk"}
	urls := map[string]string{}
	for _, name := range []string{serverMCPGo, serverGoSDK} {
		bin := filepath.Join(b.work, name)
		if err := buildGo(ctx, b.opts.dir, peers[name], bin, nil); err != nil {
			return err
		}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		if _, err := b.ps.start(name, bin, nil, "--addr", addr); err != nil {
			return err
		}
		if err := waitTCP(ctx, addr, peerBudget); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		urls[name] = "http://" + addr + "/mcp"
	}
	b.log.Info("starting kadu with the echo bundle", "config", config)
	kadu, err := startKadu(ctx, b.ps, "kadu-echo", b.opts.kadu, config, filepath.Join(b.work, "echo"), kaduEnv(cacheEnv))
	if err != nil {
		return err
	}
	urls[serverKadu] = kadu.base + "/mcp"
	token, err := kadu.token(ctx)
	if err != nil {
		return err
	}

	header, body, err := toolCall(token, "echo", map[string]any{"message": echoMessage})
	if err != nil {
		return err
	}
	verifyEcho := func(res toolResult) error {
		if c := res.Result.Content; len(c) != 1 || c[0].Type != "text" || c[0].Text != echoMessage {
			return fmt.Errorf("echo answered %+v, want one text block %q", res.Result.Content, echoMessage)
		}
		return nil
	}
	var targets []target
	for _, name := range []string{serverKadu, serverMCPGo, serverGoSDK} {
		targets = append(targets, target{Name: name, URL: urls[name], Header: header, Body: body, Verify: verifyEcho})
	}
	before, err := kadu.pluginMemory(ctx, "echo")
	if err != nil {
		return err
	}
	if err := b.rounds(ctx, targets, b.echo, func() {
		if m, err := kadu.pluginMemory(ctx, "echo"); err == nil {
			b.log.Info("echo pool after the warm-up", "instances", m.Instances, "idle", m.Idle, "evictions", m.Evictions)
		}
	}); err != nil {
		return err
	}
	mem, err := kadu.pluginMemory(ctx, "echo")
	if err != nil {
		return err
	}
	b.memory["echo"] = mem.since(before)
	return nil
}

// measureExecutionsGet loads kadu_executions_get on SQLite and on
// PostgreSQL (a throwaway cluster), one server each with the built-in
// configuration, alternating.
func (b *bench) measureExecutionsGet(ctx context.Context, cacheEnv string) error {
	servers := map[string]*kaduServer{}
	tokens := map[string]string{}
	if b.opts.only["sqlite"] {
		b.log.Info("starting kadu on SQLite")
		k, err := startKadu(ctx, b.ps, "kadu-sqlite", b.opts.kadu, "", filepath.Join(b.work, "sqlite"), kaduEnv(cacheEnv))
		if err != nil {
			return err
		}
		if tokens["sqlite"], err = k.token(ctx); err != nil {
			return err
		}
		servers["sqlite"] = k
	}
	if b.opts.only["postgres"] {
		pg, pgToken, err := b.startPostgres(ctx, cacheEnv)
		if err != nil {
			return err
		}
		servers["postgres"], tokens["postgres"] = pg, pgToken
	}
	var targets []target
	for _, store := range []string{"sqlite", "postgres"} {
		k := servers[store]
		if k == nil {
			continue
		}
		id, err := k.succeededExecution(ctx, tokens[store])
		if err != nil {
			return fmt.Errorf("kadu on %s: %w", store, err)
		}
		header, body, err := toolCall(tokens[store], "kadu_executions_get", map[string]any{"id": id})
		if err != nil {
			return err
		}
		targets = append(targets, target{Name: store, URL: k.base + "/mcp", Header: header, Body: body,
			Verify: func(res toolResult) error {
				sc := res.Result.StructuredContent
				if sc["id"] != id || sc["status"] != "succeeded" {
					return fmt.Errorf("kadu_executions_get answered id %v status %v, want %s succeeded", sc["id"], sc["status"], id)
				}
				return nil
			}})
	}
	before := map[string]bundleMemory{}
	for store, k := range servers {
		m, err := k.pluginMemory(ctx, "executions")
		if err != nil {
			return err
		}
		before[store] = m
	}
	if err := b.rounds(ctx, targets, b.execGet, nil); err != nil {
		return err
	}
	for store, k := range servers {
		mem, err := k.pluginMemory(ctx, "executions")
		if err != nil {
			return err
		}
		b.memory["executions/"+store] = mem.since(before[store])
	}
	return nil
}

// startPostgres starts a throwaway PostgreSQL cluster (core/store/pgtest:
// PostgreSQL 15's binaries, a free loopback port, durability off) and
// Kadu on a database of it. The cluster is stopped with the servers.
func (b *bench) startPostgres(ctx context.Context, cacheEnv string) (*kaduServer, string, error) {
	b.log.Info("starting a throwaway PostgreSQL")
	cluster, err := pgtest.Start(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("PostgreSQL: %w", err)
	}
	b.ps.onStop(func() { _ = cluster.Stop() })
	_, dsn, err := cluster.CreateDatabase(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("PostgreSQL: %w", err)
	}
	b.log.Info("starting kadu on PostgreSQL")
	key, err := randomKey()
	if err != nil {
		return nil, "", err
	}
	// One process: the single-node rules (local blobs, the embedded
	// issuer) hold; cursors still need a signing key on PostgreSQL.
	k, err := startKadu(ctx, b.ps, "kadu-postgres", b.opts.kadu, "", filepath.Join(b.work, "postgres"),
		kaduEnv(cacheEnv, "KADU_STORE__DRIVER=postgres", "KADU_STORE__DSN="+dsn, "KADU_SINGLE_NODE=true", "KADU_API__SIGNING_KEY="+key))
	if err != nil {
		return nil, "", err
	}
	token, err := k.token(ctx)
	return k, token, err
}

// randomKey is a fresh api.signing_key: 48 random bytes, hex.
func randomKey() (string, error) {
	b := make([]byte, 48)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// rounds checks every target once in full, warms each (pools filled,
// connections open, nothing recorded), calls warmed (if not nil), then loads them one after the
// other, round after round, so that a change in the machine's load
// touches all of them alike.
func (b *bench) rounds(ctx context.Context, targets []target, into map[string][]loadResult, warmed func()) error {
	for _, t := range targets {
		if err := verify(ctx, t); err != nil {
			return err
		}
		if _, err := attack(ctx, t, b.opts.conns, b.mode.warm); err != nil {
			return err
		}
	}
	if warmed != nil {
		warmed()
	}
	for round := range b.mode.rounds {
		for _, t := range targets {
			res, err := attack(ctx, t, b.opts.conns, b.mode.run)
			if err != nil {
				return err
			}
			b.log.Info("load", "target", t.Name, "round", round+1, "req/s", int(res.RPS()),
				"p50", res.P50.Round(10*time.Microsecond), "p99", res.P99.Round(10*time.Microsecond), "failed", res.Failed)
			into[t.Name] = append(into[t.Name], res)
		}
	}
	return nil
}

// waitTCP waits until addr accepts a connection.
func waitTCP(ctx context.Context, addr string, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s accepted no connection within %s: %w", addr, budget, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// header describes the machine and the run, above the table.
func header(ctx context.Context, opts options, m mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`go tool task bench` (%s mode), %s UTC. ", m.name, time.Now().UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "%d CPUs (%s), %s/%s, %s; load average at start %s. ", runtime.NumCPU(), cpuModel(),
		runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAverage())
	if v, err := exec.CommandContext(ctx, opts.kadu, "--version").Output(); err == nil {
		fmt.Fprintf(&b, "Server: %s. ", strings.TrimSpace(string(v)))
	}
	fmt.Fprintf(&b, "Load: vegeta v12.13.0 (library), %d connections with one request in flight each, keep-alive, "+
		"%s per run, %d round(s) alternating the servers, after a %s warm-up each. ", opts.conns, m.run, m.rounds, m.warm)
	fmt.Fprintf(&b, "Ranges are min–max over the runs.\n")
	return b.String()
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
