package kadu

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Statuses of kadu_describe and kadu_handle (sdk/ABI.md §5).
const (
	statusOK       int32 = 0
	statusProtocol int32 = 1
	statusFault    int32 = 2
)

// Operations of kadu_handle.
const (
	opToolsCall   = "tools/call"
	opResourcesRd = "resources/read"
	opPromptsGet  = "prompts/get"
	opComplete    = "completion/complete"
)

// server is a registered bundle: the manifest and the handlers by name. It
// is immutable after newServer, but for manifest, set by the first
// Describe (a guest runs one call at a time).
type server struct {
	// m is the manifest; kadu_describe encodes it on its first call.
	// The host describes a bundle once, when it loads it, not on each
	// instance's _initialize, which is where Register runs.
	m         manifest.Manifest
	manifest  []byte
	tools     map[string]*toolEntry
	resources map[string]*Resource
	templates []*templateEntry
	prompts   map[string]*Prompt
	complete  *Completion
}

var _ abi.Guest = (*server)(nil)

// Describe serves kadu_describe: the manifest, checked at Register.
func (s *server) Describe(h abi.Host, inLen int32) int32 {
	if _, err := readInput(h, inLen); err != nil {
		logf(h, levelError, "kadu_describe: %v", err)
		return statusFault
	}
	if s.manifest == nil {
		raw, err := marshal(s.m)
		if err != nil {
			logf(h, levelError, "kadu_describe: encoding the manifest: %v", err)
			return statusFault
		}
		s.manifest = raw
	}
	return write(h, s.manifest, statusOK)
}

// Handle serves kadu_handle: it decodes the invocation, runs the handler,
// and writes the result. A panic is logged with its stack and answered
// with a fault, so that the host discards the instance.
func (s *server) Handle(h abi.Host, inLen int32) (status int32) {
	defer func() {
		if r := recover(); r != nil {
			logf(h, levelError, "kadu_handle: panic: %v\n%s", r, debug.Stack())
			status = statusFault
		}
	}()
	in, err := readInput(h, inLen)
	if err != nil {
		logf(h, levelError, "kadu_handle: %v", err)
		return statusFault
	}
	var inv invocation
	if err := decodeInvocation(in, &inv); err != nil {
		return protocolError(h, CodeInvalidParams, "kadu_handle: the invocation does not have the kadu/v1 shape: "+err.Error(), nil)
	}
	c := &Call{host: h, inv: &inv}
	var out []byte
	switch p := &inv.Params; inv.Op {
	case opToolsCall:
		out, err = s.callTool(c, p)
	case opResourcesRd:
		out, err = s.readResource(c, p)
	case opPromptsGet:
		out, err = s.getPrompt(c, p)
	case opComplete:
		out, err = s.completion(c, p)
	default:
		err = InvalidParams(fmt.Sprintf("This bundle does not serve op %q.", inv.Op), nil)
	}
	var rpc *RPCError
	switch {
	case err == nil:
		return write(h, out, statusOK)
	case errors.As(err, &rpc):
		return protocolError(h, rpc.Code, rpc.Message, rpc.Data)
	}
	logf(h, levelError, "kadu_handle %s: %v", inv.Op, err)
	return statusFault
}

// readInput reads the invocation's input of inLen bytes.
func readInput(h abi.Host, inLen int32) ([]byte, error) {
	if inLen < 0 {
		return nil, fmt.Errorf("negative input length %d", inLen)
	}
	buf := make([]byte, inLen)
	if n := h.InputRead(buf); n != inLen {
		return nil, fmt.Errorf("input_read returned %d for %d bytes", n, inLen)
	}
	return buf, nil
}

// write hands out to the host and returns status, or a fault when the host
// refuses it for size.
func write(h abi.Host, out []byte, status int32) int32 {
	if h.OutputWrite(out) != 0 {
		logf(h, levelError, "kadu: the output of %d bytes is over this bundle's output cap; return less (e.g. ask for a smaller page)", len(out))
		return statusFault
	}
	return status
}

func protocolError(h abi.Host, code int, message string, data any) int32 {
	out, err := marshal(RPCError{Code: code, Message: message, Data: data})
	if err != nil {
		logf(h, levelError, "kadu: encoding JSON-RPC error %d: %v", code, err)
		return statusFault
	}
	return write(h, out, statusProtocol)
}

// handlerError turns what a resource, prompt or completion handler
// returned into the error Handle answers: these results have no isError,
// so what a tool would report to the model becomes a JSON-RPC error.
func handlerError(err error) error {
	var ir *inputRequired
	var te *toolError
	var ae *APIError
	switch {
	case errors.As(err, &ir):
		return err // encoded by the caller
	case errors.As(err, &te):
		return InvalidParams(te.text, nil)
	case errors.As(err, &ae) && ae.Status < 500:
		msg := ae.problem().Detail
		if msg == "" {
			msg = fmt.Sprintf("The Kadu API refused the request (HTTP %d).", ae.Status)
		}
		return InvalidParams(msg, map[string]any{"status": ae.Status, "error": json.RawMessage(ae.text())})
	case errors.As(err, &ae):
		return &RPCError{Code: CodeInternalError, Message: ae.text()}
	case errors.As(err, new(*RPCError)):
		return err
	}
	return &RPCError{Code: CodeInternalError, Message: err.Error()}
}

func (s *server) callTool(c *Call, p *params) ([]byte, error) {
	t := s.tools[p.Name]
	if t == nil {
		return nil, InvalidParams("Unknown tool: "+p.Name, nil)
	}
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	}
	v, err := t.run(c, p.Arguments)
	if err == nil {
		if out, ok := fastToolResult(v, t.structured); ok {
			return out, nil
		}
	}
	var res toolResult
	var ir *inputRequired
	var rpc *RPCError
	var te *toolError
	var ae *APIError
	switch {
	case err == nil:
		if res, err = encodeToolValue(v, t.structured); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.name, err)
		}
	case errors.As(err, &ir):
		out, err := ir.encode()
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.name, err)
		}
		return out, nil
	case errors.As(err, &rpc):
		return nil, rpc
	case errors.As(err, &te):
		res = errorResult(te.text)
	case errors.As(err, &ae):
		res = errorResult(ae.text())
	default:
		res = errorResult(err.Error())
	}
	return marshal(res)
}

func (s *server) readResource(c *Call, p *params) ([]byte, error) {
	var contents []ResourceContents
	var err error
	var mime string
	if r := s.resources[p.URI]; r != nil {
		mime = r.MIMEType
		contents, err = r.Read(c)
	} else {
		found := false
		for _, e := range s.templates {
			if vars, ok := e.match(p.URI); ok {
				found, mime = true, e.t.MIMEType
				contents, err = e.t.Read(c, p.URI, vars)
				break
			}
		}
		if !found {
			err = ErrResourceNotFound
		}
	}
	var ae *APIError
	if errors.Is(err, ErrResourceNotFound) || (errors.As(err, &ae) && ae.Status == 404) {
		return nil, &RPCError{Code: CodeInvalidParams, Message: "Resource not found", Data: map[string]string{"uri": p.URI}}
	}
	if err != nil {
		return encodeOrError(handlerError(err))
	}
	for i := range contents {
		if contents[i].URI == "" {
			contents[i].URI = p.URI
		}
		if contents[i].MIMEType == "" {
			contents[i].MIMEType = mime
		}
	}
	if contents == nil {
		contents = []ResourceContents{}
	}
	return marshal(struct {
		Contents []ResourceContents `json:"contents"`
	}{contents})
}

// encodeOrError answers an input-required error with its result and
// passes any other error on.
func encodeOrError(err error) ([]byte, error) {
	var ir *inputRequired
	if errors.As(err, &ir) {
		return ir.encode()
	}
	return nil, err
}

func (s *server) getPrompt(c *Call, p *params) ([]byte, error) {
	pr := s.prompts[p.Name]
	if pr == nil {
		return nil, InvalidParams("Unknown prompt: "+p.Name, nil)
	}
	args := map[string]string{}
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		if err := json.Unmarshal(p.Arguments, &args); err != nil {
			return nil, InvalidParams("Prompt arguments must be an object of strings.", nil)
		}
	}
	var missing []string
	for _, a := range pr.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, InvalidParams("Missing required argument: "+strings.Join(missing, ", "), nil)
	}
	res, err := pr.Get(c, args)
	if err != nil {
		return encodeOrError(handlerError(err))
	}
	if res == nil {
		return nil, fmt.Errorf("prompt %s: Get returned nil and no error", pr.Name)
	}
	out := *res
	if out.Messages == nil {
		out.Messages = []PromptMessage{}
	}
	return marshal(out)
}

func (s *server) completion(c *Call, p *params) ([]byte, error) {
	if s.complete == nil {
		return nil, InvalidParams("This bundle offers no completions.", nil)
	}
	req := CompleteRequest{Arguments: map[string]string{}}
	var ctx struct {
		Arguments map[string]string `json:"arguments"`
	}
	for _, m := range []struct {
		raw json.RawMessage
		v   any
	}{{p.Ref, &req.Ref}, {p.Argument, &req.Argument}, {p.Context, &ctx}} {
		if len(m.raw) > 0 {
			if err := json.Unmarshal(m.raw, m.v); err != nil {
				return nil, InvalidParams("kadu_handle: the completion/complete params do not have the kadu/v1 shape: "+err.Error(), nil)
			}
		}
	}
	if ctx.Arguments != nil {
		req.Arguments = ctx.Arguments
	}
	res, err := s.complete.Complete(c, req)
	if err != nil {
		return encodeOrError(handlerError(err))
	}
	return marshal(res.wire())
}
