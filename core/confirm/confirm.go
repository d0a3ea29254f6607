package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

// Defaults of Options.
const (
	DefaultStateTTL    = 5 * time.Minute  // docs/reference/confirmation.md: a requestState lives 5 min
	DefaultApprovalTTL = 15 * time.Minute // docs/reference/confirmation.md: an approval link lives 15 min
)

// Options configures New. Next, Store, Keys and PublicURL are required.
type Options struct {
	// Next is the Catalog that serves the tools (the plugin registry). The
	// Confirmer calls its CallTool only once a destructive call is
	// confirmed, and passes it every requestState that is not the
	// Confirmer's own: Next must refuse a requestState it did not seal
	// (the plugin registry does), or a forged one would skip confirmation.
	Next mcp.Catalog

	// Store keeps approvals and the single use of requestStates, shared by
	// every replica.
	Store *store.DB

	// Keys is the key ring that seals requestState: 32-byte AES-256-GCM
	// keys, the same on every replica. Keys[0] seals; every key opens, so a
	// rotation puts the new key first and keeps the old one at least
	// StateTTL. New copies them.
	Keys [][]byte

	// PublicURL is the origin people reach the server at, e.g.
	// "https://kadu.example.com"; approval links are PublicURL +
	// "/approve/" + id.
	PublicURL string

	// StateTTL is how long a requestState can be answered. Default
	// DefaultStateTTL.
	StateTTL time.Duration

	// ApprovalTTL is how long an approval link can be used. Default
	// DefaultApprovalTTL.
	ApprovalTTL time.Duration

	// RunLimit is the longest a confirmed call can take, from the claim of
	// its state or approval to the record of its outcome. It must exceed
	// the longest bundle call (core/app derives it from the plugins'
	// configuration): a claim older than this without an outcome was left
	// by a server that stopped mid-run, and its next retry records the
	// call's outcome as unknown (interrupted.go). Default DefaultRunLimit.
	RunLimit time.Duration

	// Logger receives one line per confirmation event (never a token, a
	// requestState or arguments). Default: discard.
	Logger *slog.Logger

	// Now is the clock for expiries. Default time.Now.
	Now func() time.Time

	// Metrics counts confirmation events (metrics.go). Nil: none.
	Metrics Metrics
	// TracerProvider records the span of each confirmation step
	// (trace.go). Nil: none.
	TracerProvider trace.TracerProvider
}

// Confirmer is an mcp.Catalog that holds back destructive tool calls until
// their person confirms them (docs/reference/confirmation.md), and serves everything else from
// Next unchanged.
//
// A Confirmer is safe for concurrent use and keeps nothing about a client
// in memory: states and approvals live in the store, so any replica
// answers any step. It owns no resources; Next and Store stay the caller's
// to close.
type Confirmer struct {
	// next is Next, embedded so that everything but CallTool (tools,
	// resources, prompts, completions: none destroys anything) is served
	// by it unchanged. Unexported, so that no holder of a Confirmer can
	// reach Next around the confirmation.
	next

	// fixed at creation
	db          *store.DB
	keys        *keyRing
	publicURL   string // no trailing slash
	stateTTL    time.Duration
	approvalTTL time.Duration
	runLimit    time.Duration
	log         *slog.Logger
	now         func() time.Time
	metrics     Metrics
	tracer      trace.Tracer

	// How a retry of a state whose accepted call is still running waits
	// for its outcome: polls of the store, pollEvery apart. Tests shorten
	// them.
	pollEvery time.Duration
	polls     int

	schemas schemaCache // safe for concurrent use
}

var _ mcp.Catalog = (*Confirmer)(nil)

// next names the embedded Catalog; the alias keeps the field unexported.
type next = mcp.Catalog

// New returns a Confirmer over opts.
func New(opts Options) (*Confirmer, error) {
	var errs []error
	if opts.Next == nil {
		errs = append(errs, errors.New("confirm: Options.Next is required: give the Catalog that serves the tools"))
	}
	if opts.Store == nil {
		errs = append(errs, errors.New("confirm: Options.Store is required"))
	}
	keys, err := newKeyRing(opts.Keys)
	if err != nil {
		errs = append(errs, err)
	}
	public, err := publicOrigin(opts.PublicURL)
	if err != nil {
		errs = append(errs, err)
	}
	if opts.StateTTL < 0 || opts.ApprovalTTL < 0 || opts.RunLimit < 0 {
		errs = append(errs, errors.New("confirm: Options.StateTTL, ApprovalTTL and RunLimit must not be negative (0 means the default)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &Confirmer{
		next:        opts.Next,
		db:          opts.Store,
		keys:        keys,
		publicURL:   public,
		stateTTL:    opts.StateTTL,
		approvalTTL: opts.ApprovalTTL,
		runLimit:    opts.RunLimit,
		log:         opts.Logger,
		now:         opts.Now,
		metrics:     opts.Metrics,
		tracer:      tracerOf(opts.TracerProvider),
		pollEvery:   100 * time.Millisecond,
		polls:       50,
	}
	if c.stateTTL == 0 {
		c.stateTTL = DefaultStateTTL
	}
	if c.approvalTTL == 0 {
		c.approvalTTL = DefaultApprovalTTL
	}
	if c.runLimit == 0 {
		c.runLimit = DefaultRunLimit
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// publicOrigin checks PublicURL: an absolute http(s) URL with a host and
// nothing after the path.
func publicOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if s == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("confirm: Options.PublicURL %q: want the origin people open approval links at, e.g. https://kadu.example.com", s)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// destructive reports whether calls of t need confirmation. A tool without
// annotations gets the protocol's defaults, under which it is destructive.
func destructive(t *mcp.Tool) bool {
	return t.Annotations == nil || t.Annotations.DestructiveHint
}

// CallTool runs call through Next, unless the tool is destructive: then the
// first call answers with a confirmation request (in-chat input_required or
// an approval link) and only a confirmed retry runs it, once.
func (c *Confirmer) CallTool(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	if !destructive(call.Tool) {
		return c.next.CallTool(ctx, p, call)
	}
	if call.RequestState != "" && !isOurs(call.RequestState) {
		// A bundle's own input-required state: the bundle was called, so
		// this call was confirmed before; Next verifies the state.
		return c.next.CallTool(ctx, p, call)
	}
	ctx, span := c.startStep(ctx, call)
	defer span.End()
	if res := c.checkArguments(call); res != nil {
		return res, nil
	}
	if call.RequestState != "" {
		return c.retry(ctx, p, call)
	}
	if canAsk(&call.Client) {
		return c.ask(ctx, p, call)
	}
	return c.requestApproval(ctx, p, call)
}

// canAsk reports whether the client can be asked in the chat: era
// 2026-07-28 and form elicitation declared, as "elicitation": {} (form by
// default) or with "form". A client that declared only "url" cannot take a
// form, and a server never sends an undeclared mode.
func canAsk(cc *mcp.ClientContext) bool {
	if cc.Era != mcp.Era2026 || !cc.HasCapability("elicitation") {
		return false
	}
	var modes map[string]json.RawMessage
	if err := json.Unmarshal(cc.Capabilities["elicitation"], &modes); err != nil || modes == nil {
		return false
	}
	if len(modes) == 0 {
		return true
	}
	_, form := modes["form"]
	return form
}

// title is how a tool is named to people.
func title(t *mcp.Tool) string {
	switch {
	case t.Title != "":
		return t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		return t.Annotations.Title
	}
	return t.Name
}

// ToolTitle returns the title of the tool name as p sees it in Next, or
// name itself when Next does not list it for p.
func (c *Confirmer) ToolTitle(ctx context.Context, p *auth.Principal, name string) string {
	tools, err := c.next.Tools(ctx, p)
	if err != nil {
		return name
	}
	for i := range tools {
		if tools[i].Name == name {
			return title(&tools[i])
		}
	}
	return name
}
