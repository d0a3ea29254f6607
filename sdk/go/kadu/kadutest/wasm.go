package kadutest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// callTimeout stops a guest that runs away. It is a safety net, not a
// measure: a healthy call takes microseconds.
const callTimeout = time.Minute

// cache is shared by every module this process compiles, and kept on disk
// next to BuildWasm's modules so that the next test process reuses it (a
// Go bundle compiles in about a second, and loads from the cache in tens
// of milliseconds).
var cache = sync.OnceValue(func() wazero.CompilationCache {
	if dir, err := cacheDir("wazero"); err == nil {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
})

// Wasm loads the bundle module at path (see BuildWasm) under wazero, served
// by host h, after checking its exports and imports against sdk/ABI.md §2.
// It reads and checks the manifest, failing t on every rule of sdk/ABI.md §10 it
// breaks. The runtime is closed when t ends.
func Wasm(t testing.TB, path string, h *Host) *Bundle {
	t.Helper()
	code, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("kadutest: reading the bundle: %v", err)
	}
	ctx := context.Background()
	e := &wasmEngine{h: h}
	e.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithCompilationCache(cache()))
	t.Cleanup(func() { _ = e.rt.Close(ctx) })
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
		t.Fatalf("kadutest: WASI: %v", err)
	}
	if err := e.hostModule(ctx); err != nil {
		t.Fatalf("kadutest: host module: %v", err)
	}
	if e.compiled, err = e.rt.CompileModule(ctx, code); err != nil {
		t.Fatalf("kadutest: compiling %s: %v", path, err)
	}
	if err := checkModule(e.compiled); err != nil {
		t.Fatalf("kadutest: %s: %v", path, err)
	}
	b := &Bundle{host: h, eng: e}
	b.load(t)
	return b
}

// checkModule applies the load checks of sdk/ABI.md §2 that a compiled
// module allows.
func checkModule(m wazero.CompiledModule) error {
	var errs []error
	exports := m.ExportedFunctions()
	want := map[string]string{"kadu_abi_v1": "() -> ()", "kadu_describe": "(i32) -> i32", "kadu_handle": "(i32) -> i32"}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		def, ok := exports[name]
		switch {
		case !ok && name == "kadu_abi_v1":
			errs = append(errs, errors.New("not a kadu v1 bundle: no export kadu_abi_v1"))
		case !ok:
			errs = append(errs, fmt.Errorf("no export %s", name))
		case signature(def) != want[name]:
			errs = append(errs, fmt.Errorf("export %s is %s; want %s", name, signature(def), want[name]))
		}
	}
	if _, ok := exports["_start"]; ok {
		errs = append(errs, errors.New("exports _start: a command module, not a reactor (build with -buildmode=c-shared)"))
	}
	if _, ok := m.ExportedMemories()["memory"]; !ok {
		errs = append(errs, errors.New("no exported memory"))
	}
	for _, imp := range m.ImportedFunctions() {
		mod, name, _ := imp.Import()
		switch mod {
		case "wasi_snapshot_preview1":
		case "kadu":
			if sig, ok := hostSignatures[name]; !ok {
				errs = append(errs, fmt.Errorf("imports kadu.%s, which kadu v1 does not define", name))
			} else if signature(imp) != sig {
				errs = append(errs, fmt.Errorf("imports kadu.%s as %s; want %s", name, signature(imp), sig))
			}
		default:
			errs = append(errs, fmt.Errorf("imports %s.%s: only kadu and wasi_snapshot_preview1 are provided", mod, name))
		}
	}
	return errors.Join(errs...)
}

// hostSignatures are the kadu imports (sdk/ABI.md §6).
var hostSignatures = map[string]string{
	"input_read":   "(i32,i32) -> i32",
	"output_write": "(i32,i32) -> i32",
	"api":          "(i32,i32,i32,i32,i32,i32) -> i64",
	"api_read":     "(i32,i32) -> i32",
	"caller_info":  "(i32,i32) -> i32",
	"config_get":   "(i32,i32,i32,i32) -> i32",
	"log":          "(i32,i32,i32) -> ()",
}

func signature(f api.FunctionDefinition) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ",")
	}
	res := names(f.ResultTypes())
	if res == "" {
		res = "()"
	}
	return "(" + names(f.ParamTypes()) + ") -> " + res
}

// wasmEngine runs a module under wazero, one instance at a time, replaced
// after a fault as the real host does.
type wasmEngine struct {
	h        *Host
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	mod      api.Module // nil until the first call and after a fault
	cur      *session   // the call in progress; host functions act on it
}

func (e *wasmEngine) call(s *session) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if e.mod == nil {
		e.cur = &session{h: e.h, phase: phaseInit}
		cfg := wazero.NewModuleConfig().WithName("").
			WithStartFunctions("_initialize").
			WithSysWalltime().WithSysNanotime().WithSysNanosleep().
			WithRandSource(rand.Reader).
			WithStdout(&lineLog{h: e.h, level: 1}).
			WithStderr(&lineLog{h: e.h, level: 2})
		mod, err := e.rt.InstantiateModule(ctx, e.compiled, cfg)
		if err != nil {
			return 0, fmt.Errorf("instantiating: %w", err)
		}
		e.mod = mod
	}
	e.cur = s
	defer func() { e.cur = nil }()
	name := "kadu_handle"
	if s.phase == phaseDescribe {
		name = "kadu_describe"
	}
	res, err := e.mod.ExportedFunction(name).Call(ctx, uint64(uint32(len(s.input))))
	if err != nil || (int32(res[0]) != 0 && int32(res[0]) != 1) || s.tooLarge {
		_ = e.mod.Close(context.Background())
		e.mod = nil
	}
	if err != nil {
		return -1, err
	}
	return int32(res[0]), nil
}

// mem returns guest bytes [ptr, ptr+n); out of range traps.
func mem(m api.Module, ptr, n uint32) []byte {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(trap(fmt.Sprintf("kadutest: [%d, %d+%d) is outside guest memory", ptr, ptr, n)))
	}
	return b
}

func (e *wasmEngine) hostModule(ctx context.Context) error {
	b := e.rt.NewHostModuleBuilder("kadu")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		return e.cur.InputRead(mem(m, buf, capacity))
	}).Export("input_read")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) int32 {
		return e.cur.OutputWrite(mem(m, ptr, n))
	}).Export("output_write")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, mp, ml, pp, pl, bp, bl uint32) int64 {
		return e.cur.API(string(mem(m, mp, ml)), string(mem(m, pp, pl)), bytes.Clone(mem(m, bp, bl)))
	}).Export("api")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		return e.cur.APIRead(mem(m, buf, capacity))
	}).Export("api_read")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		return e.cur.CallerInfo(mem(m, buf, capacity))
	}).Export("caller_info")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, kp, kl, buf, capacity uint32) int32 {
		return e.cur.ConfigGet(string(mem(m, kp, kl)), mem(m, buf, capacity))
	}).Export("config_get")
	b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, level int32, ptr, n uint32) {
		e.cur.Log(level, bytes.Clone(mem(m, ptr, n)))
	}).Export("log")
	_, err := b.Instantiate(ctx)
	return err
}

// lineLog turns what the guest writes to stdout or stderr into log
// entries, one per line.
type lineLog struct {
	h     *Host
	level int32
	buf   []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.h.log(l.level, bytes.Clone(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}
