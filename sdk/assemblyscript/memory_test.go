package assemblyscriptsdk_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// instance is the fixture under wazero with a minimal host of its own,
// because these tests look at what kadutest does not show: the size of
// the guest's memory between calls.
type instance struct {
	mod    api.Module
	handle api.Function
	input  []byte
	output []byte
	resp   []byte
	calls  int // api calls, all invocations together
}

func newInstance(t testing.TB, path string) *instance {
	t.Helper()
	code, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	in := &instance{}
	read := func(m api.Module, ptr, n uint32) []byte {
		b, ok := m.Memory().Read(ptr, n)
		if !ok {
			panic("out of range")
		}
		return b
	}
	fill := func(m api.Module, buf, capacity uint32, data []byte) int32 {
		if int(capacity) >= len(data) {
			copy(read(m, buf, capacity), data)
		}
		return int32(len(data))
	}
	caller := []byte(`{"org_id":"org_m","user_id":"user_m","role":"member","scopes":["kadu.read","kadu.run"],"request_id":"req_m","client":null}`)
	_, err = rt.NewHostModuleBuilder("kadu").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		if int(capacity) < len(in.input) {
			return -1
		}
		return fill(m, buf, capacity, in.input)
	}).Export("input_read").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) int32 {
		in.output = append(in.output[:0], read(m, ptr, n)...)
		return 0
	}).Export("output_write").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, mp, ml, pp, pl, bp, bl uint32) int64 {
		in.calls++
		in.resp = []byte(`{"id":"tsk_1","path":"` + string(read(m, pp, pl)) + `","body_bytes":` + itoa(int(bl)) + `}`)
		return 200<<32 | int64(len(in.resp))
	}).Export("api").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		if int(capacity) < len(in.resp) {
			return -1
		}
		return fill(m, buf, capacity, in.resp)
	}).Export("api_read").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, buf, capacity uint32) int32 {
		return fill(m, buf, capacity, caller)
	}).Export("caller_info").
		NewFunctionBuilder().WithFunc(func(context.Context, api.Module, uint32, uint32, uint32, uint32) int32 {
		return -1
	}).Export("config_get").
		NewFunctionBuilder().WithFunc(func(context.Context, api.Module, int32, uint32, uint32) {}).Export("log").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in.mod, err = rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	in.handle = in.mod.ExportedFunction("kadu_handle")
	return in
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// invoke calls kadu_handle and fails t unless it answered status 0 or 1.
func (in *instance) invoke(t testing.TB, inv string) string {
	t.Helper()
	in.input = []byte(inv)
	res, err := in.handle.Call(context.Background(), uint64(len(in.input)))
	if err != nil || res[0] > 1 {
		t.Fatalf("kadu_handle %.200s: status %v, %v", inv, res, err)
	}
	return string(in.output)
}

// mix is a spread of what a busy instance serves: big and small JSON,
// API calls with bodies, the caller, input required, resources, prompts,
// completions.
func mix() []string {
	big, _ := json.Marshal(map[string]any{"rows": strings.Split(strings.Repeat("ação 😀 row,", 2000), ",")})
	tool := func(name, args string) string {
		return `{"op":"tools/call","params":{"name":"` + name + `","arguments":` + args + `},"client":{"capabilities":{"elicitation":{}},"protocol_version":"2026-07-28"}}`
	}
	return []string{
		tool("echo", `{"value":`+string(big)+`}`),
		tool("echo", `{"value":[1,2.5,"x",{"a":null}]}`),
		tool("get_task", `{"id":"tsk_1"}`),
		tool("run_task", `{"id":"tsk_1","input":{"month":"2026-11"}}`),
		tool("call", `{"method":"GET","path":"/api/v1/usage","repeat":20,"pad_bytes":4096}`),
		tool("whoami", `{}`),
		tool("ask", `{}`),
		tool("fail", `{"tier":"tool","message":"no"}`),
		tool("fail", `{"tier":"protocol","message":"no"}`),
		tool("big", `{"bytes":50000}`),
		`{"op":"resources/read","params":{"uri":"fixture://items/abc"}}`,
		`{"op":"resources/read","params":{"uri":"fixture://items/missing"}}`,
		`{"op":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada"}}}`,
		`{"op":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"al"}}}`,
	}
}

// TestMemoryIsStable serves 1000 calls from one instance, as a pool does,
// and checks that the guest's memory stops growing once it has served
// each kind of call: nothing an invocation allocates outlives it.
func TestMemoryIsStable(t *testing.T) {
	in := newInstance(t, fixture(t))
	calls := mix()
	for i := 0; i < 2*len(calls); i++ { // warm up: every call twice
		in.invoke(t, calls[i%len(calls)])
	}
	warm := in.mod.Memory().Size()
	start := time.Now()
	const n = 1000
	for i := 0; i < n; i++ {
		in.invoke(t, calls[i%len(calls)])
	}
	elapsed := time.Since(start)
	after := in.mod.Memory().Size()
	t.Logf("memory: %d KiB after warm-up, %d KiB after %d more calls (%v per call, %d api calls)",
		warm>>10, after>>10, n, elapsed/n, in.calls)
	if after > warm {
		t.Errorf("memory grew from %d to %d KiB over %d calls; want it flat once warm", warm>>10, after>>10, n)
	}
}

// BenchmarkEcho measures a small tools/call round trip through the SDK:
// parse the invocation, run the handler, write the result.
func BenchmarkEcho(b *testing.B) {
	in := newInstance(b, fixture(b))
	inv := `{"op":"tools/call","params":{"name":"echo","arguments":{"value":{"id":"tsk_1","n":[1,2,3]}}},"client":{"capabilities":null,"protocol_version":"2025-06-18"}}`
	for b.Loop() {
		in.invoke(b, inv)
	}
}
