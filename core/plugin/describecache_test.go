package plugin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// describeEnv is a Registry over a private compilation cache directory
// with the describe cache on, loading b; m counts its describes.
func describeEnv(t *testing.T, dir string, b BundleConfig) (*env, *countingMetrics) {
	t.Helper()
	m := &countingMetrics{}
	e := newEnv(t, func(o *Options) {
		o.CacheDir, o.DescribeCache, o.Metrics = dir, true, m
	}, b)
	return e, m
}

func toolNames(t *testing.T, e *env) []string {
	t.Helper()
	tools, err := e.r.Tools(context.Background(), principal("org_a"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// TestDescribeCacheRestart: a restart over the same cache directory serves
// the same tools without instantiating the bundle to describe it; the
// bundle still works, and its instances reserve the memory the first
// describe measured.
func TestDescribeCacheRestart(t *testing.T) {
	dir := t.TempDir()
	echo := bundle(t, "echo")
	first, m1 := describeEnv(t, dir, echo)
	if n := m1.get("call echo describe"); n != 1 {
		t.Fatalf("first start: %d describes, want 1", n)
	}
	second, m2 := describeEnv(t, dir, echo)
	if n := m2.get("call echo describe"); n != 0 {
		t.Fatalf("restart with the same module and configuration: %d describes, want 0 (from the cache)", n)
	}
	if got, want := toolNames(t, second), toolNames(t, first); !slices.Equal(got, want) {
		t.Fatalf("tools after the restart = %v, want %v", got, want)
	}
	v1, v2 := first.r.snap.Load().byName["echo"], second.r.snap.Load().byName["echo"]
	if v1.memEstimate.Load() == 0 || v2.memEstimate.Load() != v1.memEstimate.Load() {
		t.Fatalf("memory estimate after the restart = %d, want %d (the first describe's)", v2.memEstimate.Load(), v1.memEstimate.Load())
	}
	res, err := second.call(t, "org_a", "echo", `{"text":"cached"}`)
	if err != nil || res.IsError {
		t.Fatalf("call after a cached describe: %v %+v", err, res)
	}
	if got := structured(t, res)["text"]; got != "cached" {
		t.Fatalf("echo answered %v", got)
	}
}

// TestDescribeCacheMisses: what kadu_describe could answer differently to
// is described again — a new build (a hot swap included), other settings —,
// and an entry that is not one the cache wrote is a miss, not an error.
func TestDescribeCacheMisses(t *testing.T) {
	dir := t.TempDir()
	echo := bundle(t, "echo")
	describeEnv(t, dir, echo)

	t.Run("settings", func(t *testing.T) {
		b := echo
		b.Config = map[string]string{"tool_prefix": "p_"}
		e, m := describeEnv(t, dir, b)
		if n := m.get("call echo describe"); n != 1 {
			t.Fatalf("other settings: %d describes, want 1", n)
		}
		if names := toolNames(t, e); !slices.Contains(names, "p_echo") {
			t.Fatalf("tools = %v, want p_echo among them (the settings' manifest)", names)
		}
	})
	t.Run("new build on reload", func(t *testing.T) {
		e, m := describeEnv(t, dir, echo)
		if err := e.r.Reload(context.Background(), []BundleConfig{echoV(t, "9.9.9")}); err != nil {
			t.Fatal(err)
		}
		if n := m.get("call echo describe"); n != 1 {
			t.Fatalf("hot swap to a new build: %d describes, want 1", n)
		}
		if got := e.statusOf(t, "echo").Version; got != "9.9.9" {
			t.Fatalf("version after the swap = %q", got)
		}
	})
	t.Run("damaged entry", func(t *testing.T) {
		entries, err := filepath.Glob(filepath.Join(dir, describeCacheDir, "*.json"))
		if err != nil || len(entries) == 0 {
			t.Fatalf("no cache entries in %s (%v)", dir, err)
		}
		for _, p := range entries {
			if err := os.WriteFile(p, []byte(`{"manifest":`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		e, m := describeEnv(t, dir, echo)
		if n := m.get("call echo describe"); n != 1 {
			t.Fatalf("damaged entry: %d describes, want 1", n)
		}
		if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDescribeCacheOff: without DescribeCache (the default) every start
// describes, and nothing is written.
func TestDescribeCacheOff(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		m := &countingMetrics{}
		newEnv(t, func(o *Options) { o.CacheDir, o.Metrics = dir, m }, bundle(t, "echo"))
		if n := m.get("call echo describe"); n != 1 {
			t.Fatalf("%d describes, want 1", n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, describeCacheDir)); !os.IsNotExist(err) {
		t.Fatalf("describe cache written with DescribeCache off: %v", err)
	}
}
