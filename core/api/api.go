package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/store"
)

// BasePath is where the app mounts the API; Location headers name resources
// under it.
const BasePath = "/api/v1"

// Queue is the job queue as the API uses it (core/jobs implements it).
// Implementations must be safe for concurrent use.
type Queue interface {
	// EnqueueExecution inserts the job that runs the queued execution id,
	// inside tx: the execution row and its job commit together or not at all.
	EnqueueExecution(ctx context.Context, tx *store.Tx, orgID, executionID string) error

	// EnqueueResume inserts, inside tx, the job that resumes execution id
	// (just moved from waiting_input back to queued) with the answer to its
	// pending input. The answer travels in the job: the store keeps no copy.
	EnqueueResume(ctx context.Context, tx *store.Tx, orgID, executionID string, r Resume) error

	// CancelRunning asks the worker running execution id to stop. Best
	// effort: the execution is already cancelling when it is called, and the
	// worker also notices the status. Called after the transaction commits.
	CancelRunning(ctx context.Context, orgID, executionID string) error

	// Emit records the event code about object (the resource's API JSON)
	// for the organisation's webhooks that subscribe to it and schedules
	// their deliveries, inside tx when tx is not nil.
	Emit(ctx context.Context, tx *store.Tx, orgID, code string, object json.RawMessage) error

	// EnqueueReplay inserts, inside tx, the job that makes one more attempt
	// of delivery id to its webhook's current URL with its current secret,
	// outside the delivery's retry schedule.
	EnqueueReplay(ctx context.Context, tx *store.Tx, orgID, deliveryID string) error
}

// Resume is the answer to a waiting_input execution, for the runner
// (agent.Resume has the same fields).
type Resume struct {
	StepID string          // PendingInput.StepID of the pause being answered
	Answer json.RawMessage // a JSON object, valid against PendingInput.InputSchema
}

// ScopeChallenger builds the 403 step-up challenge (docs/reference/auth.md) for a principal
// that lacks a scope. *auth.Authenticator implements it.
type ScopeChallenger interface {
	InsufficientScope(r *http.Request, p *auth.Principal, required string) *auth.Challenge
}

// Options configures New. Store, Queue, and Plans with DefaultPlan or
// PlanResolver are required.
type Options struct {
	// Store holds the organisations' data.
	Store *store.DB

	// PlanResolver finds each organisation's plan; give the process's one
	// resolver (core/plans) so that every package shares its cache. Nil: New
	// builds one over Store from Plans and DefaultPlan.
	PlanResolver *plans.Resolver

	// Plans are the plans organisations can be on, by name (config.Plans),
	// when PlanResolver is nil. New copies the map.
	Plans map[string]plans.Plan

	// DefaultPlan is the plan a provisioned organisation gets, when
	// PlanResolver is nil; it must be in Plans. It is also used, with a warning, for an organisation whose plan
	// is no longer configured.
	DefaultPlan string

	// AutoProvision provisions an organisation seen for the first time
	// (config Orgs.AutoProvision()); when false its requests get 403
	// org_not_provisioned.
	AutoProvision bool

	// ExampleTasks gives a newly provisioned organisation the example tasks
	// of examples.go (config Orgs.ExampleTasks()).
	ExampleTasks bool

	// CursorKey signs pagination cursors; replicas must share it. At least
	// 32 bytes. Nil: a random key, so cursors do not survive a restart and
	// are not valid on another replica.
	CursorKey []byte

	// Queue runs executions.
	Queue Queue

	// Blobs keeps file contents (the /files routes). Nil: the /files routes
	// answer 503 and input_file_ids is refused.
	Blobs Blobs

	// Challenger builds the WWW-Authenticate header of insufficient_scope
	// answers: give the Authenticator of /api/v1. Nil: a header without
	// resource_metadata.
	Challenger ScopeChallenger

	// ValidatePlaybook checks a task's playbook when it is saved and returns
	// the most one execution of it can cost (agent.ValidatePlaybook for the
	// built-in runner). Nil: only the shape is checked (a JSON object or
	// array), and launches are estimated at the task's max_cost_cents.
	ValidatePlaybook func(json.RawMessage) (costCents int64, err error)

	// WebhookAllowHosts are the hosts a webhook URL may name although they
	// are plain http or private addresses (webhook.ValidateURL), for local
	// development. Nil: https to public addresses only. New copies it.
	WebhookAllowHosts []string

	// Logger receives provisioning events and internal errors. Default:
	// discard.
	Logger *slog.Logger

	// SettleApproval, when set, is applied to every approval read before
	// it is answered (confirm.Confirmer.Settle): an approved call whose
	// server stopped before recording its outcome is then reported as
	// failed, with an outcome saying so, instead of running forever. Nil:
	// approvals are answered as stored.
	SettleApproval func(ctx context.Context, a store.Approval) (store.Approval, error)

	// Now is the clock for months, expiries and idempotency. Default
	// time.Now.
	Now func() time.Time
}

// API serves /api/v1 (tasks, executions, usage).
//
// An API is safe for concurrent use. It owns no resources: the store and
// the queue stay the caller's to close.
type API struct {
	// fixed at creation
	db                *store.DB
	plans             *plans.Resolver
	autoProvision     bool
	exampleTasks      bool
	cursors           cursors
	queue             Queue
	blobs             Blobs
	challenger        ScopeChallenger
	validatePlaybook  func(json.RawMessage) (int64, error)
	webhookAllowHosts []string
	log               *slog.Logger
	now               func() time.Time
	settleApproval    func(ctx context.Context, a store.Approval) (store.Approval, error)

	rts []route // the route table with its handlers
}

// New returns an API over opts.
func New(opts Options) (*API, error) {
	var errs []error
	if opts.Store == nil {
		errs = append(errs, errors.New("api: Options.Store is required"))
	}
	if opts.Queue == nil {
		errs = append(errs, errors.New("api: Options.Queue is required"))
	}
	resolver := opts.PlanResolver
	if resolver == nil && opts.Store != nil {
		var err error
		resolver, err = plans.New(plans.Options{Plans: opts.Plans, Default: opts.DefaultPlan,
			Lookup: opts.Store.PlanOf, Logger: opts.Logger, Now: opts.Now})
		if err != nil {
			errs = append(errs, fmt.Errorf("api: Options.Plans: %w", err))
		}
	}
	key := opts.CursorKey
	switch {
	case key == nil:
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	case len(key) < 32:
		errs = append(errs, fmt.Errorf("api: Options.CursorKey has %d bytes; want at least 32", len(key)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	a := &API{
		db:                opts.Store,
		settleApproval:    opts.SettleApproval,
		plans:             resolver,
		autoProvision:     opts.AutoProvision,
		exampleTasks:      opts.ExampleTasks,
		cursors:           cursors{key: slices.Clone(key)},
		queue:             opts.Queue,
		blobs:             opts.Blobs,
		challenger:        opts.Challenger,
		validatePlaybook:  opts.ValidatePlaybook,
		webhookAllowHosts: slices.Clone(opts.WebhookAllowHosts),
		log:               opts.Logger,
		now:               opts.Now,
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	rts, err := a.routes()
	if err != nil {
		return nil, err
	}
	a.rts = rts
	return a, nil
}

// route is one row of the route table (core/api/routeclass) with its
// handler: what serve needs.
type route struct {
	method   string
	path     string    // under BasePath, Echo syntax
	pattern  string    // "METHOD /api/v1/path" as the table spells it: the audit trail's route
	okStatus int       // the status of a success (the first of the table's)
	role     auth.Role // minimum role
	scope    string    // required scope
	query    []string  // accepted query parameters
	h        handler
}

// handlers maps each route of the table, "METHOD /path" under BasePath
// with {id}, to its handler: those of tasks and executions here, then
// those of files.go, approvals.go, playbooks.go, webhooks.go and audit.go.
func (a *API) handlers() map[string]handler {
	hs := map[string]handler{
		"GET /tasks":                     a.listTasks,
		"POST /tasks":                    a.createTask,
		"GET /tasks/{id}":                a.getTask,
		"PATCH /tasks/{id}":              a.updateTask,
		"DELETE /tasks/{id}":             a.deleteTask,
		"POST /tasks/{id}/run":           a.runTask,
		"PUT /tasks/{id}/launch_policy":  a.setLaunchPolicy,
		"PUT /tasks/{id}/destinations":   a.setDestinations,
		"GET /executions":                a.listExecutions,
		"GET /executions/{id}":           a.getExecution,
		"GET /executions/{id}/steps":     a.listSteps,
		"POST /executions/{id}/continue": a.continueExecution,
		"POST /executions/{id}/cancel":   a.cancelExecution,
		"DELETE /executions/{id}":        a.deleteExecution,
		"GET /usage":                     a.getUsage,
	}
	for _, more := range []map[string]handler{a.fileHandlers(), a.approvalHandlers(), a.playbookHandlers(), a.webhookHandlers(), a.auditHandlers()} {
		maps.Copy(hs, more)
	}
	return hs
}

// routes joins the route table and the handlers: every row must have a
// handler and every handler a row, so that a route cannot be served
// without its role, scope and class, nor documented without being served.
func (a *API) routes() ([]route, error) {
	return joinRoutes(routeclass.Routes(), a.handlers())
}

// joinRoutes gives each row its handler from hs, which it empties.
func joinRoutes(rows []routeclass.Route, hs map[string]handler) ([]route, error) {
	var rs []route
	var errs []error
	for _, r := range rows {
		key := r.Method + " " + strings.TrimPrefix(r.Path, BasePath)
		h, ok := hs[key]
		if !ok {
			errs = append(errs, fmt.Errorf("api: route %s is in core/api/routeclass but has no handler", r))
			continue
		}
		delete(hs, key)
		scope, ok := tokenScopes[r.Scope]
		if !ok || !auth.Role(r.Role).Valid() {
			errs = append(errs, fmt.Errorf("api: route %s: role %q or scope %q is not one of core/auth's", r, r.Role, r.Scope))
			continue
		}
		okStatus := http.StatusOK
		if len(r.Statuses) > 0 {
			okStatus = r.Statuses[0]
		}
		rs = append(rs, route{method: r.Method, path: echoPath(strings.TrimPrefix(r.Path, BasePath)),
			pattern: r.String(), okStatus: okStatus,
			role: auth.Role(r.Role), scope: scope, query: r.Query, h: h})
	}
	for _, key := range slices.Sorted(maps.Keys(hs)) {
		errs = append(errs, fmt.Errorf("api: handler for %s, which is not in core/api/routeclass: add its row there", key))
	}
	return rs, errors.Join(errs...)
}

// tokenScopes maps the table's scopes, as manifests spell them, to the
// access token's.
var tokenScopes = map[string]string{"read": auth.ScopeRead, "write": auth.ScopeWrite, "run": auth.ScopeRun, "admin": auth.ScopeAdmin}

// echoPath turns the table's {name} parameters into Echo's :name.
func echoPath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// Register mounts every route of docs/reference/rest.md#routes for tasks, executions and usage
// on g, which the app creates at BasePath with Middlewares. A path asked
// with a method it does not serve gets 405 method_not_allowed with Allow.
func (a *API) Register(g *echo.Group) {
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range a.rts {
		g.Add(rt.method, rt.path, a.serve(rt))
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for _, path := range paths {
		allow := strings.Join(allowed[path], ", ")
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if !slices.Contains(allowed[path], m) {
				g.Add(m, path, methodNotAllowed(allow))
			}
		}
	}
}

func methodNotAllowed(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		e := problem(http.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed",
			"This route accepts "+allow+".", "Use one of the methods in the Allow header.")
		e.Header = http.Header{"Allow": {allow}}
		return e
	}
}

// Middlewares returns, in order, what the /api/v1 group needs around the
// handlers: RequestID, AccessLog, Errors (renders every error, recovers panics),
// BodyLimit, then authn (the auth.Authenticator's Middleware). Use them as
// e.Group(api.BasePath, a.Middlewares(authn.Middleware())...).
func (a *API) Middlewares(authn echo.MiddlewareFunc) []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{RequestID(), AccessLog(a.log), Errors(a.log), BodyLimit(), authn}
}

// Errors renders the error a handler further in returns with ErrorHandler,
// and turns a panic into a logged 500, so that /api/v1 answers in its own
// error shape whatever the app's global error handler does.
func Errors(log *slog.Logger) echo.MiddlewareFunc {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	render := ErrorHandler(log)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					if r == http.ErrAbortHandler {
						panic(r)
					}
					render(fmt.Errorf("panic: %v\n%s", r, debug.Stack()), c)
					err = nil
				}
			}()
			if err := next(c); err != nil {
				render(err, c)
			}
			return nil
		}
	}
}
