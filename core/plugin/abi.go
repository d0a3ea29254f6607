package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// Names of the kadu v1 ABI (sdk/ABI.md).
const (
	hostModule     = "kadu"
	exportMarker   = "kadu_abi_v1"
	exportDescribe = "kadu_describe"
	exportHandle   = "kadu_handle"
	exportInit     = "_initialize"
	exportStart    = "_start"
	exportMemory   = "memory"
)

// Host-side caps of the ABI.
const (
	maxAPIBody    = 1 << 20 // api() request body
	maxAPIMethod  = 16      // api() method
	maxAPIPath    = 8 << 10 // api() path with its query
	maxLogMessage = 4 << 10 // log() and one line of stdout/stderr
	maxConfigKey  = 1 << 10 // config_get key
)

// errMemoryAccess is the panic a host function raises when a guest passes
// a pointer or length outside its memory: wazero turns it into an error
// from Call, and the call faults as a trap.
var errMemoryAccess = errors.New("kadu host function: pointer or length outside guest memory")

// invocation is the state of one guest entry: what the host functions read
// and write while it runs. It belongs to the goroutine running the entry and
// must not be kept after it.
type invocation struct {
	v     *version
	inst  *instance
	p     *auth.Principal // nil during _initialize and kadu_describe
	reqID string
	info  *mcp.Implementation
	input []byte
	// op, target and allow are the operation being handled and the highest
	// route class it may call (routeclass.go); the zero allow permits no
	// route at all.
	op     string
	target string
	allow  routeclass.Class

	output    []byte // copied out of guest memory
	hasOutput bool
	tooLarge  bool
	apiResp   []byte
	apiCalls  int
	caller    []byte // caller_info JSON, built on first use
	stderr    []byte // the tail of stderr, for fault logs

	hostTime time.Duration // inside api() dispatches, for the call's span (trace.go)

	ctx invocationCtx // see withContext
}

type invocationKey struct{}

func invocationFrom(ctx context.Context) *invocation {
	inv, _ := ctx.Value(invocationKey{}).(*invocation)
	return inv
}

// invocationCtx is the context of a guest entry: the caller's, with its
// deadline, that also answers invocationKey with the invocation. It lives
// inside the invocation, so an entry allocates no context of its own
// beyond the deadline's.
type invocationCtx struct {
	context.Context
	inv *invocation
}

func (c *invocationCtx) Value(key any) any {
	if _, ok := key.(invocationKey); ok {
		return c.inv
	}
	return c.Context.Value(key)
}

// withContext returns ctx carrying inv for the host functions.
func (inv *invocation) withContext(ctx context.Context) context.Context {
	inv.ctx = invocationCtx{Context: ctx, inv: inv}
	return &inv.ctx
}

// instantiateHost defines the "kadu" host module in rt. The functions read
// the current invocation from the call's context, so one definition serves
// every instance of the runtime.
func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	b := rt.NewHostModuleBuilder(hostModule)
	fn := func(name string, f api.GoModuleFunc, params, results []api.ValueType) {
		b.NewFunctionBuilder().WithGoModuleFunction(f, params, results).Export(name)
	}
	fn("input_read", hostInputRead, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("output_write", hostOutputWrite, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("api", hostAPI, []api.ValueType{i32, i32, i32, i32, i32, i32}, []api.ValueType{i64})
	fn("api_read", hostAPIRead, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("caller_info", hostCallerInfo, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("config_get", hostConfigGet, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32})
	fn("log", hostLog, []api.ValueType{i32, i32, i32}, nil)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("defining the kadu host module: %w", err)
	}
	return nil
}

// read returns a view of guest memory; it is valid only until the guest
// runs again (memory.grow may move it), so callers copy what they keep.
func read(m api.Module, ptr, n uint32) []byte {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(errMemoryAccess)
	}
	return b
}

// writeIfFits copies data to buf when capacity allows, and returns the
// ABI's answer for input_read and api_read: len(data), or -1 when it does
// not fit (nothing copied).
func writeIfFits(m api.Module, buf, capacity uint32, data []byte) int32 {
	if uint64(capacity) < uint64(len(data)) {
		return -1
	}
	if len(data) > 0 && !m.Memory().Write(buf, data) {
		panic(errMemoryAccess)
	}
	return int32(len(data))
}

// writeLength is the answer of caller_info and config_get: always
// len(data), which is copied only when capacity allows, so a guest can ask
// with an empty buffer first and again with one of the right size.
func writeLength(m api.Module, buf, capacity uint32, data []byte) int32 {
	if uint64(capacity) >= uint64(len(data)) && len(data) > 0 && !m.Memory().Write(buf, data) {
		panic(errMemoryAccess)
	}
	return int32(len(data))
}

func i32(v uint64) uint32           { return api.DecodeU32(v) }
func ret32(stack []uint64, v int32) { stack[0] = api.EncodeI32(v) }

// input_read(buf, cap) -> i32
func hostInputRead(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	if inv == nil {
		ret32(stack, -1)
		return
	}
	ret32(stack, writeIfFits(m, i32(stack[0]), i32(stack[1]), inv.input))
}

// output_write(ptr, len) -> i32
func hostOutputWrite(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	ptr, n := i32(stack[0]), i32(stack[1])
	if inv == nil {
		ret32(stack, -1)
		return
	}
	if uint64(n) > uint64(inv.v.cfg.Limits.MaxOutputBytes) {
		inv.tooLarge = true
		ret32(stack, -1)
		return
	}
	inv.output = append(inv.output[:0], read(m, ptr, n)...)
	inv.hasOutput = true
	ret32(stack, 0)
}

// api(method, mlen, path, plen, body, blen) -> i64: (status << 32) | len
func hostAPI(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	// Bound what is copied out of the guest before copying it: no route is
	// longer than maxAPIPath, so a longer method or path is refused unread.
	var method, path string
	if ml, pl := i32(stack[1]), i32(stack[3]); ml <= maxAPIMethod && pl <= maxAPIPath {
		method = string(read(m, i32(stack[0]), ml))
		path = string(read(m, i32(stack[2]), pl))
	}
	bodyLen := i32(stack[5])
	status, resp := inv.apiCall(ctx, method, path, func() []byte {
		return read(m, i32(stack[4]), bodyLen)
	}, bodyLen)
	if inv != nil {
		inv.apiResp = resp
	}
	stack[0] = uint64(uint32(status))<<32 | uint64(uint32(len(resp)))
}

// apiCall applies the host's checks in order — a caller, the per-entry
// budget, the body cap, the granted routes, the route's class against the
// operation's — then dispatches as the caller.
// body is read from guest memory only once the cap allows it.
func (inv *invocation) apiCall(ctx context.Context, method, path string, body func() []byte, bodyLen uint32) (int, []byte) {
	if inv == nil || inv.p == nil {
		return refusal(inv, http.StatusForbidden, "route_not_granted", "No caller",
			"api() is only available while handling a request, not during _initialize or kadu_describe.",
			"Call the API from kadu_handle.")
	}
	v := inv.v
	inv.apiCalls++
	if inv.apiCalls > v.cfg.Limits.APICalls {
		return refusal(inv, http.StatusTooManyRequests, "api_budget_exhausted", "API budget exhausted",
			fmt.Sprintf("This call made more than %d API requests.", v.cfg.Limits.APICalls),
			"Do less per call, or ask the operator to raise "+bundleconf.Key(v.cfg.Name, "api_calls")+".")
	}
	if bodyLen > maxAPIBody {
		return refusal(inv, http.StatusRequestEntityTooLarge, "payload_too_large", "Payload too large",
			fmt.Sprintf("The request body is %d bytes; the limit is %d.", bodyLen, maxAPIBody),
			"Send less data in one request.")
	}
	if !v.allowed(method, path) {
		return refusal(inv, http.StatusForbidden, "route_not_granted", "Route not granted",
			fmt.Sprintf("%s %s is not within the bundle's declared routes granted by the operator.", method, trimQuery(path)),
			"Declare the route in the manifest and ask the operator to grant it.")
	}
	if status, resp, ok := inv.checkClass(ctx, method, path); !ok {
		return status, resp
	}
	var b []byte
	if bodyLen > 0 {
		b = append([]byte(nil), body()...) // the dispatcher may outlive this view
	}
	v.apiCalls.Add(1)
	start := time.Now()
	defer func() { inv.hostTime += time.Since(start) }()
	return v.reg.dispatcher.Dispatch(ctx, inv.p, method, path, b)
}

func trimQuery(path string) string {
	for i := 0; i < len(path); i++ {
		if path[i] == '?' {
			return path[:i]
		}
	}
	return path
}

// refusal renders a host-side refusal in the API's own error shape.
func refusal(inv *invocation, status int, code, title, detail, hint string) (int, []byte) {
	reqID := ""
	if inv != nil {
		reqID = inv.reqID
	}
	type problem struct {
		Code   string  `json:"code"`
		Title  string  `json:"title"`
		Detail string  `json:"detail"`
		Param  *string `json:"param"`
		Hint   string  `json:"hint"`
	}
	body, _ := json.Marshal(struct {
		Status    int       `json:"status"`
		Errors    []problem `json:"errors"`
		RequestID string    `json:"request_id"`
	}{status, []problem{{Code: code, Title: title, Detail: detail, Hint: hint}}, reqID})
	return status, body
}

// api_read(buf, cap) -> i32
func hostAPIRead(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	if inv == nil {
		ret32(stack, -1)
		return
	}
	ret32(stack, writeIfFits(m, i32(stack[0]), i32(stack[1]), inv.apiResp))
}

// callerJSON is caller_info's answer. Never a token.
type callerJSON struct {
	OrgID     string              `json:"org_id"`
	UserID    string              `json:"user_id"`
	Role      auth.Role           `json:"role"`
	Scopes    []string            `json:"scopes"`
	RequestID string              `json:"request_id"`
	Client    *mcp.Implementation `json:"client"`
}

// caller_info(buf, cap) -> i32. Without a caller (kadu_describe) the
// answer is null.
func hostCallerInfo(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	data := []byte("null")
	if inv != nil && inv.p != nil {
		if inv.caller == nil {
			var client *mcp.Implementation
			if inv.info != nil {
				client = &mcp.Implementation{Name: inv.info.Name, Version: inv.info.Version}
			}
			inv.caller, _ = json.Marshal(callerJSON{
				OrgID: inv.p.OrgID, UserID: inv.p.Subject, Role: inv.p.Role,
				Scopes: auth.CloseScopes(inv.p.Scopes), RequestID: inv.reqID, Client: client,
			})
		}
		data = inv.caller
	}
	ret32(stack, writeLength(m, i32(stack[0]), i32(stack[1]), data))
}

// config_get(key, klen, buf, cap) -> i32
func hostConfigGet(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	if inv == nil {
		ret32(stack, -1)
		return
	}
	klen := i32(stack[1])
	if klen > maxConfigKey {
		ret32(stack, -1) // no key is that long
		return
	}
	val, ok := inv.v.cfg.Config[string(read(m, i32(stack[0]), klen))]
	if !ok {
		ret32(stack, -1)
		return
	}
	ret32(stack, writeLength(m, i32(stack[2]), i32(stack[3]), []byte(val)))
}

// log(level, ptr, len)
func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	inv := invocationFrom(ctx)
	if inv == nil || inv.inst == nil {
		return
	}
	level := slog.LevelInfo
	switch api.DecodeI32(stack[0]) {
	case 0:
		level = slog.LevelDebug
	case 2:
		level = slog.LevelWarn
	case 3:
		level = slog.LevelError
	}
	n := min(i32(stack[2]), maxLogMessage)
	inv.inst.logs.emit(ctx, level, "log", string(read(m, i32(stack[1]), n)))
}
