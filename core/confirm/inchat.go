package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

// confirmKey is the inputRequests/inputResponses key of the confirmation.
const confirmKey = "confirm"

// errInvalidState is the one answer to a requestState that fails any
// check: tampered, sealed with a key no longer in the ring, expired,
// another caller's, other arguments, another tool, or already declined.
func errInvalidState() *mcp.Error { return mcp.InvalidParams("Invalid or expired requestState") }

// elicitRequest is inputRequests.confirm, exactly as docs/reference/confirmation.md writes it.
type elicitRequest struct {
	Method string       `json:"method"`
	Params elicitParams `json:"params"`
}

type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// confirmSchema is the form the client shows: one boolean.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Continue?"}},"required":["confirm"]}`)

// ask answers a destructive call with input_required: a form asking the
// person to confirm, and a sealed requestState binding the answer to this
// caller, tool and arguments.
func (c *Confirmer) ask(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	b, err := newBinding(p, call.Tool.Name, call.Arguments)
	if err != nil {
		return nil, uncanonicalArguments(err)
	}
	claims, err := newClaims(b, c.now(), c.stateTTL)
	if err != nil {
		return nil, err
	}
	sealed, err := c.keys.seal(claims)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(elicitRequest{Method: "elicitation/create", Params: elicitParams{
		Mode:            "form",
		Message:         c.explain(ctx, p.OrgID, call.Tool.Name, title(call.Tool), call.Arguments, "en"),
		RequestedSchema: confirmSchema,
	}})
	if err != nil {
		return nil, fmt.Errorf("confirm: encoding the confirmation request: %w", err)
	}
	c.log.InfoContext(ctx, "confirm: asked in the chat", c.attrs(p, call)...)
	c.confirmation("asked")
	return &mcp.ToolResult{InputRequests: map[string]json.RawMessage{confirmKey: req}, RequestState: sealed}, nil
}

func uncanonicalArguments(err error) *mcp.Error {
	return mcp.InvalidParams("Invalid params: arguments hold a number that JSON cannot carry exactly (%v); send it as a string or a smaller number", err)
}

// answer is the person's reply to the confirmation form.
type answer int

const (
	answerNone answer = iota // no inputResponses.confirm
	answerAccept
	answerDecline
	answerCancel
)

// parseAnswer reads inputResponses.confirm: an elicitation result with
// action accept and content {"confirm": bool}, or action decline or
// cancel. Any other shape is -32602 naming the field.
func parseAnswer(responses map[string]json.RawMessage) (answer, *mcp.Error) {
	raw, ok := responses[confirmKey]
	if !ok {
		return answerNone, nil
	}
	// Member names are matched exactly, as the protocol spells them.
	var r map[string]json.RawMessage
	var action string
	if json.Unmarshal(raw, &r) != nil || json.Unmarshal(r["action"], &action) != nil {
		return 0, badAnswer()
	}
	switch action {
	case "accept":
		var content map[string]json.RawMessage
		var yes bool
		if json.Unmarshal(r["content"], &content) != nil || string(content["confirm"]) == "null" ||
			json.Unmarshal(content["confirm"], &yes) != nil {
			return 0, badAnswer()
		}
		if yes {
			return answerAccept, nil
		}
		return answerDecline, nil
	case "decline":
		return answerDecline, nil
	case "cancel":
		return answerCancel, nil
	}
	return 0, badAnswer()
}

func badAnswer() *mcp.Error {
	return mcp.InvalidParams(`Invalid params: inputResponses.confirm must be {"action":"accept","content":{"confirm":true}} ` +
		`to run the tool, or {"action":"decline"} or {"action":"cancel"}; send it with the same requestState`)
}

// retry answers a call that came back with one of our requestStates.
func (c *Confirmer) retry(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	b, err := newBinding(p, call.Tool.Name, call.Arguments)
	if err != nil {
		return nil, errInvalidState() // the state cannot have been sealed for these arguments
	}
	claims, err := c.keys.open(call.RequestState)
	if err != nil || !claims.matches(b, c.now()) {
		c.log.InfoContext(ctx, "confirm: requestState refused", c.attrs(p, call)...)
		c.confirmation(c.refusedEvent(claims, err))
		return nil, errInvalidState()
	}
	ans, aerr := parseAnswer(call.InputResponses)
	if aerr != nil {
		return nil, aerr
	}
	switch ans {
	case answerNone:
		// A valid state without an answer: ask again, with a fresh state.
		if canAsk(&call.Client) {
			return c.ask(ctx, p, call)
		}
		return c.requestApproval(ctx, p, call)
	case answerAccept:
		return c.runOnce(ctx, p, call, claims)
	default:
		return c.decline(ctx, p, call, claims, ans)
	}
}

// runOnce runs an accepted call unless its state was answered before: the
// nonce is claimed in the shared store first, so of any number of
// concurrent or replayed accepts on any replica exactly one runs the tool;
// the others get its stored outcome.
func (c *Confirmer) runOnce(ctx context.Context, p *auth.Principal, call *mcp.ToolCall, claims stateClaims) (*mcp.ToolResult, error) {
	cs, claimed, err := c.claim(ctx, p, call, claims, store.ConfirmAccepted, "")
	if err != nil {
		return nil, err
	}
	if !claimed {
		return c.answered(ctx, p, call, cs)
	}
	// The call runs to its end even if the client goes away: its outcome
	// is what a replay of this state returns.
	runCtx := context.WithoutCancel(ctx)
	res, callErr := c.next.CallTool(runCtx, p, confirmed(call))
	out, err := encodeOutcome(res, callErr)
	if err == nil {
		err = c.db.RecordConfirmOutcome(runCtx, p.OrgID, claims.Nonce, out)
	}
	if errors.Is(err, store.ErrConflict) {
		// The run outlasted RunLimit and a retry recorded it as
		// interrupted (interrupted.go): that answer stands for everyone,
		// this one included, so that all agree on one outcome.
		c.log.WarnContext(ctx, "confirm: a confirmed call finished after its outcome was recorded as interrupted; answering the recorded outcome (raise confirm's run limit: see core/app/confirmlimit.go)",
			c.attrs(p, call)...)
		if cs, gerr := c.db.GetConfirmState(runCtx, p.OrgID, claims.Nonce); gerr == nil && cs.Outcome != nil {
			return decodeOutcome(cs.Outcome)
		}
	}
	if err != nil {
		// The call ran; only its replay is lost. Say so, answer anyway.
		c.log.ErrorContext(ctx, "confirm: recording the outcome of a confirmed call", append(c.attrs(p, call), slog.Any("error", err))...)
	}
	c.log.InfoContext(ctx, "confirm: accepted in the chat; the call ran", c.attrs(p, call)...)
	c.confirmation("accepted")
	return res, callErr
}

// confirmed is call as Next gets it once confirmed: without our
// confirmation response and our requestState.
func confirmed(call *mcp.ToolCall) *mcp.ToolCall {
	out := *call
	out.RequestState = ""
	out.InputResponses = nil
	if len(call.InputResponses) > 1 {
		out.InputResponses = maps.Clone(call.InputResponses)
		delete(out.InputResponses, confirmKey)
	}
	return &out
}

// decline records that the person said no, which uses up the state too.
func (c *Confirmer) decline(ctx context.Context, p *auth.Principal, call *mcp.ToolCall, claims stateClaims, ans answer) (*mcp.ToolResult, error) {
	reason := "declined"
	if ans == answerCancel {
		reason = "cancelled"
	}
	cs, claimed, err := c.claim(ctx, p, call, claims, store.ConfirmDeclined, reason)
	if err != nil {
		return nil, err
	}
	if !claimed {
		return c.answered(ctx, p, call, cs)
	}
	c.log.InfoContext(ctx, "confirm: "+reason+" in the chat; nothing ran", c.attrs(p, call)...)
	c.confirmation(reason)
	return notExecuted(title(call.Tool), reason), nil
}

// claim records the person's answer to the state of claims, and its audit
// event (docs/audit.md#confirmations-and-approvals), in one transaction:
// the event exists exactly when the answer was recorded, so a replay (not
// claimed) records nothing. detail says how a decline was given
// ("declined" or "cancelled").
func (c *Confirmer) claim(ctx context.Context, p *auth.Principal, call *mcp.ToolCall, claims stateClaims,
	status store.ConfirmStatus, detail string) (store.ConfirmState, bool, error) {
	action, outcome := store.AuditConfirmAccepted, store.OutcomeSucceeded
	if status == store.ConfirmDeclined {
		action, outcome = store.AuditConfirmDeclined, store.OutcomeDeclined
	}
	var clientName string
	if call.Client.Info != nil {
		clientName = call.Client.Info.Name // as reported: nothing vouches for it
	}
	rec := audit.Confirmation(ctx, p, call.Tool.Name, call.Arguments, clientName, claims.Nonce, action, outcome)
	rec.Detail = detail
	if rec.RequestID == "" {
		rec.RequestID = call.RequestID
	}
	var cs store.ConfirmState
	var claimed bool
	err := c.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		cs, claimed, err = tx.ClaimConfirmState(ctx, p.OrgID, claims.Nonce, status, claims.expiresAt(), c.now())
		if err != nil || !claimed {
			return err
		}
		if _, err := tx.AppendAudit(ctx, rec); err != nil {
			return fmt.Errorf("recording the audit event: %w", err)
		}
		return nil
	})
	if err != nil {
		return store.ConfirmState{}, false, fmt.Errorf("confirm: claiming requestState: %w", err)
	}
	return cs, claimed, nil
}

// answered handles a state that was answered before: declined states are
// used up; an accepted one returns the outcome of its run, waiting a
// little if that run has not finished.
func (c *Confirmer) answered(ctx context.Context, p *auth.Principal, call *mcp.ToolCall, cs store.ConfirmState) (*mcp.ToolResult, error) {
	if cs.Status != store.ConfirmAccepted {
		c.log.InfoContext(ctx, "confirm: replay of a declined requestState refused", c.attrs(p, call)...)
		return nil, errInvalidState()
	}
	for i := 0; cs.Outcome == nil; i++ {
		if c.stale(cs.CreatedAt, c.now()) {
			// Its server stopped mid-run (interrupted.go): the outcome is
			// recorded as unknown, once, and the call is not run again.
			var err error
			if cs, err = c.interrupt(ctx, p, call, cs); err != nil {
				return nil, err
			}
			break
		}
		if i >= c.polls {
			break
		}
		t := time.NewTimer(c.pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		var err error
		if cs, err = c.db.GetConfirmState(ctx, p.OrgID, cs.Nonce); err != nil {
			return nil, fmt.Errorf("confirm: reading the outcome of a confirmed call: %w", err)
		}
	}
	if cs.Outcome == nil {
		return &mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(
			"This confirmed call is still running. It was not started again. " +
				"Call again with the same arguments, inputResponses and requestState in a few seconds to get its outcome.")}}, nil
	}
	c.log.InfoContext(ctx, "confirm: replay of an accepted requestState; returned the first outcome", c.attrs(p, call)...)
	return decodeOutcome(cs.Outcome)
}

// notExecuted is the answer to a declined or cancelled confirmation.
func notExecuted(toolTitle, reason string) *mcp.ToolResult {
	sc, _ := json.Marshal(struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}{"not_executed", reason})
	return &mcp.ToolResult{
		Content:           []mcp.Content{mcp.Text(fmt.Sprintf("Nothing was done: the person %s to run %s.", verb(reason), toolTitle))},
		StructuredContent: sc,
	}
}

func verb(reason string) string {
	if reason == "cancelled" {
		return "cancelled the request"
	}
	return "declined"
}

func (c *Confirmer) attrs(p *auth.Principal, call *mcp.ToolCall) []any {
	return []any{slog.String("org_id", p.OrgID), slog.String("tool", call.Tool.Name), slog.String("request_id", call.RequestID)}
}

// outcome is what a confirmed call answered, kept for replays: a result
// (input_required included) or a JSON-RPC error.
type outcome struct {
	Result *resultJSON `json:"result,omitempty"`
	Error  *errorJSON  `json:"error,omitempty"`
}

type resultJSON struct {
	Content           []json.RawMessage          `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent,omitempty"`
	IsError           bool                       `json:"isError,omitempty"`
	Meta              map[string]any             `json:"_meta,omitempty"`
	InputRequests     map[string]json.RawMessage `json:"inputRequests,omitempty"`
	RequestState      string                     `json:"requestState,omitempty"`
}

type errorJSON struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	Status  int             `json:"status,omitempty"`
}

// encodeOutcome turns Next's answer into its stored form. A fault (an
// error that is not an *mcp.Error) is stored as the internal error the
// client saw: its details stay in the logs.
func encodeOutcome(res *mcp.ToolResult, callErr error) (json.RawMessage, error) {
	var o outcome
	var rpc *mcp.Error
	switch {
	case errors.As(callErr, &rpc):
		data, err := json.Marshal(rpc.Data)
		if err != nil || rpc.Data == nil {
			data = nil
		}
		o.Error = &errorJSON{Code: rpc.Code, Message: rpc.Message, Data: data, Status: rpc.Status}
	case callErr != nil || res == nil:
		o.Error = &errorJSON{Code: mcp.CodeInternalError, Message: "Internal error"}
	default:
		r := &resultJSON{StructuredContent: res.StructuredContent, IsError: res.IsError, Meta: res.Meta,
			InputRequests: res.InputRequests, RequestState: res.RequestState, Content: []json.RawMessage{}}
		for _, item := range res.Content {
			b, err := json.Marshal(item)
			if err != nil {
				return nil, fmt.Errorf("confirm: encoding the outcome: %w", err)
			}
			r.Content = append(r.Content, b)
		}
		o.Result = r
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("confirm: encoding the outcome: %w", err)
	}
	return b, nil
}

// decodeOutcome returns what encodeOutcome stored, as Next answered it.
func decodeOutcome(raw json.RawMessage) (*mcp.ToolResult, error) {
	var o outcome
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("confirm: decoding a stored outcome: %w", err)
	}
	if e := o.Error; e != nil {
		out := &mcp.Error{Code: e.Code, Message: e.Message, Status: e.Status}
		if len(e.Data) > 0 {
			out.Data = e.Data
		}
		return nil, out
	}
	if o.Result == nil {
		return nil, errors.New("confirm: a stored outcome holds neither a result nor an error")
	}
	r := o.Result
	res := &mcp.ToolResult{StructuredContent: r.StructuredContent, IsError: r.IsError, Meta: r.Meta,
		InputRequests: r.InputRequests, RequestState: r.RequestState, Content: make([]mcp.Content, 0, len(r.Content))}
	for _, item := range r.Content {
		res.Content = append(res.Content, item)
	}
	return res, nil
}
