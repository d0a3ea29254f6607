package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/stateseal"
)

// Ops of the invocation JSON.
const (
	opToolsCall         = "tools/call"
	opReadResource      = "resources/read"
	opPromptsGet        = "prompts/get"
	opComplete          = "completion/complete"
	resultInputRequired = "input_required"
)

// request is one call into a bundle, whatever the op.
type request struct {
	p       *auth.Principal
	op      string
	target  string          // tool or prompt name, or URI: what requestState binds
	args    json.RawMessage // what requestState binds; nil when the op has none
	params  json.RawMessage // the op's params, one JSON value
	client  *mcp.ClientContext
	reqID   string
	replies map[string]json.RawMessage
	state   string // sealed requestState of a retry
	// class is the highest route class the operation may call through
	// api(): the tool's (toolClass), or routeclass.Read for resources,
	// prompts and completions.
	class routeclass.Class
}

// run calls the bundle for req. decode turns a status-0 output into the
// op's result; it runs before the instance is given back, so an output it
// rejects (a *FaultError) discards the instance like any other fault.
// A status-1 output becomes the bundle's *mcp.Error.
func (v *version) run(ctx context.Context, req *request, decode func(out []byte) error) (err error) {
	ctx, tr := v.reg.startCall(ctx, v, req)
	var inv *invocation
	defer func() { tr.end(inv, err) }()
	now := v.reg.set.now()
	// The state first: a call refused for it was never this bundle's to
	// run, quarantined or not (ErrStateRefused).
	state, err := v.openState(req, now)
	if err != nil {
		return err
	}
	if until, ok := v.breaker.allow(now); !ok {
		return fmt.Errorf("bundle %s: %w; calls fail until %s", v.id, ErrQuarantined, until.UTC().Format(time.RFC3339))
	}
	input, err := appendInvocation(make([]byte, 0, 192+len(req.params)+len(state)), &invocationJSON{
		Op: req.op, Params: req.params, InputResponses: req.replies, State: state,
		Client: clientJSON{Capabilities: req.client.Capabilities, ProtocolVersion: req.client.ProtocolVersion},
	})
	if err != nil {
		return fmt.Errorf("encoding the invocation for bundle %s: %w", v.id, err)
	}
	v.calls.Add(1)
	acquired := time.Now()
	inst, err := v.instanceFor(ctx, req.p.OrgID)
	tr.acquire = time.Since(acquired)
	if err != nil {
		v.fault(ctx, req, err, nil)
		return err
	}
	inv = &invocation{v: v, p: req.p, reqID: req.reqID, info: req.client.Info, input: input,
		op: req.op, target: req.target, allow: req.class}
	called := time.Now()
	out, err := inst.call(ctx, inst.handle, inv)
	tr.call = time.Since(called)
	if err == nil {
		if out.status == 1 {
			err = protocolError(v, req, out.output)
		} else {
			err = decode(out.output)
		}
	}
	var fe *FaultError
	switch {
	case errors.As(err, &fe):
		inst.close()
		v.fault(ctx, req, err, inv)
	case err != nil && ctx.Err() != nil && !isAnswer(err):
		inst.close() // cancelled mid-call: wazero closed the module
	default:
		v.done(inst)
	}
	return err
}

// openState returns the state sealed in req's requestState (nil without
// one), or the client's -32602 wrapping ErrStateRefused when the registry
// did not seal it for this call.
func (v *version) openState(req *request, now time.Time) (json.RawMessage, error) {
	if req.state == "" {
		return nil, nil
	}
	state, err := v.reg.sealer.Open(v.binding(req), req.state, now)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w: %w", v.id, ErrStateRefused, mcp.InvalidParams("Invalid or expired requestState"))
	}
	return state, nil
}

// isAnswer reports whether err is the bundle's answer (a protocol error)
// rather than a failure of the call.
func isAnswer(err error) bool {
	var me *mcp.Error
	return errors.As(err, &me)
}

// instanceFor returns an instance for org: pooled with per_org isolation,
// fresh with per_call.
func (v *version) instanceFor(ctx context.Context, org string) (*instance, error) {
	if v.pools != nil {
		inst, err := v.pools.get(ctx, org)
		if err == nil && inst.org != org {
			// Cannot happen: pools are keyed by organisation. Checked anyway,
			// because the cost of being wrong is one organisation's data in
			// another's answer.
			inst.close()
			return nil, fmt.Errorf("bundle %s: instance of another organisation handed out; refused", v.id)
		}
		return inst, err
	}
	return v.instantiate(ctx, org)
}

// done gives a healthy instance back, or closes it (per_call isolation).
func (v *version) done(inst *instance) {
	if v.pools == nil || v.closed.Load() {
		inst.close()
		return
	}
	v.pools.put(inst)
}

// fault logs a failed call and feeds the breaker when the bundle is to
// blame (a *FaultError); other failures (the caller went away, the budget
// wait ended) are logged at a lower level and not counted.
func (v *version) fault(ctx context.Context, req *request, err error, inv *invocation) {
	attrs := []slog.Attr{slog.String("op", req.op), slog.String("target", req.target),
		slog.String("org", req.p.OrgID), slog.String("request_id", req.reqID), slog.Any("error", err)}
	var fe *FaultError
	if !errors.As(err, &fe) {
		v.log.LogAttrs(ctx, slog.LevelWarn, "bundle call failed", attrs...)
		return
	}
	attrs = append(attrs, slog.String("kind", string(fe.Kind)))
	if inv != nil && len(inv.stderr) > 0 {
		attrs = append(attrs, slog.String("stderr_tail", string(inv.stderr)))
	}
	v.log.LogAttrs(ctx, slog.LevelError, "bundle fault", attrs...)
	v.reg.metrics.BundleFault(v.cfg.Name, metricKind(fe.Kind))
	now := v.reg.set.now()
	if v.breaker.fault(now) {
		v.reg.metrics.BundleQuarantined(v.cfg.Name)
		p := v.breaker.policy
		v.log.LogAttrs(ctx, slog.LevelError, "bundle quarantined",
			slog.Int("faults", p.Faults), slog.Duration("window", p.Window), slog.Duration("cooldown", p.Cooldown))
		e := versionEvent(EventQuarantined, v)
		e.Reason = fmt.Sprintf("%d faults within %s; calls fail for %s", p.Faults, p.Window, p.Cooldown)
		// No lock is held here (breaker.fault has returned), so a slow hook
		// delays this call alone; it still counts as in flight on v, which
		// a swap's drain waits for no longer than Options.DrainTimeout.
		v.reg.emit(ctx, e)
	}
}

func (v *version) binding(req *request) stateseal.Binding {
	return stateseal.Binding{Principal: req.p, Bundle: v.cfg.Name, Op: req.op, Target: req.target, Args: req.args}
}

// faultf returns an invalid-output fault of v.
func (v *version) faultf(format string, args ...any) error {
	return &FaultError{Bundle: v.id, Kind: FaultInvalid, Err: fmt.Errorf(format, args...)}
}

// protocolError turns a status-1 output into the JSON-RPC error the client
// gets. Only -32602, -32603 and the server range -32099…-32000 pass
// through; other codes become -32603, so a bundle cannot forge the
// protocol's own errors (parse error, method not found, …).
func protocolError(v *version, req *request, out []byte) error {
	var pe struct {
		Code    *int64          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(out, &pe); err != nil || pe.Code == nil {
		return v.faultf("status 1 output is not {\"code\":int,\"message\":string}")
	}
	code := *pe.Code
	if req.op == opReadResource && code == mcp.CodeInvalidParams && pe.Message == "Resource not found" {
		return mcp.ErrResourceNotFound // the engine answers in the era's form
	}
	if code != mcp.CodeInvalidParams && code != mcp.CodeInternalError && (code < -32099 || code > -32000) {
		code = mcp.CodeInternalError
	}
	if pe.Message == "" {
		pe.Message = "Bundle error"
	}
	e := &mcp.Error{Code: code, Message: pe.Message}
	if len(pe.Data) > 0 && string(pe.Data) != "null" {
		e.Data = pe.Data
	}
	return e
}

// inputRequired is the input-required result of any op.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	State         json.RawMessage            `json:"state"`
}

// capabilityFor maps an input request's method to the client capability
// it needs.
var capabilityFor = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// asInputRequired recognises an input-required output. When it is one, it
// checks the requests, refuses with -32021 when the client did not declare
// a capability they need, and seals the state.
func (v *version) asInputRequired(req *request, out []byte) (reqs map[string]json.RawMessage, sealed string, ok bool, err error) {
	var probe struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(out, &probe) != nil {
		return nil, "", false, v.faultf("output is not a JSON object")
	}
	switch probe.ResultType {
	case "", "complete":
		return nil, "", false, nil
	case resultInputRequired:
	default:
		return nil, "", false, v.faultf("unknown resultType %q", probe.ResultType)
	}
	var ir inputRequired
	if err := json.Unmarshal(out, &ir); err != nil {
		return nil, "", false, v.faultf("input_required without inputRequests")
	}
	reqs, sealed, err = v.checkInputRequired(req, &ir)
	return reqs, sealed, err == nil, err
}

// checkInputRequired checks the requests of an input-required output,
// refuses with -32021 when the client did not declare a capability they
// need, and seals the state.
func (v *version) checkInputRequired(req *request, ir *inputRequired) (reqs map[string]json.RawMessage, sealed string, err error) {
	if len(ir.InputRequests) == 0 {
		return nil, "", v.faultf("input_required without inputRequests")
	}
	if len(ir.State) > stateseal.MaxState {
		return nil, "", v.faultf("input_required state is %d bytes, over %d", len(ir.State), stateseal.MaxState)
	}
	var missing []string
	for key, raw := range ir.InputRequests {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(raw, &r) != nil || len(r.Params) == 0 || r.Params[0] != '{' {
			return nil, "", v.faultf("inputRequests[%q]: want {\"method\",\"params\":{…}}", key)
		}
		c, known := capabilityFor[r.Method]
		if !known {
			return nil, "", v.faultf("inputRequests[%q]: unknown method %q", key, r.Method)
		}
		if (req.client.Era != mcp.Era2026 || !req.client.HasCapability(c)) && !slices.Contains(missing, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, "", mcp.MissingCapability(missing...)
	}
	state := ir.State
	if len(state) == 0 {
		state = json.RawMessage("null")
	}
	sealed, err = v.reg.sealer.Seal(v.binding(req), state, v.reg.set.now())
	if err != nil {
		return nil, "", err
	}
	return ir.InputRequests, sealed, nil
}
