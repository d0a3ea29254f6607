package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

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

// ScopeChallenger builds the 403 step-up challenge (SPEC §6) for a principal
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
	return a, nil
}

// route is one row of SPEC §7.2.
type route struct {
	method string
	path   string    // under BasePath, Echo syntax
	role   auth.Role // minimum role
	scope  string    // required scope
	query  []string  // accepted query parameters
	h      handler
}

var listQuery = []string{"limit", "cursor"}

func (a *API) coreRoutes() []route {
	const (
		get, post, patch, put, del = http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete
		viewer, member, admin      = auth.RoleViewer, auth.RoleMember, auth.RoleAdmin
		read, write, run, adm      = auth.ScopeRead, auth.ScopeWrite, auth.ScopeRun, auth.ScopeAdmin
	)
	return []route{
		{get, "/tasks", viewer, read, append(listQuery, "q"), a.listTasks},
		{post, "/tasks", admin, adm, nil, a.createTask},
		{get, "/tasks/:id", viewer, read, nil, a.getTask},
		{patch, "/tasks/:id", admin, write, nil, a.updateTask},
		{del, "/tasks/:id", admin, adm, nil, a.deleteTask},
		{post, "/tasks/:id/run", member, run, nil, a.runTask},
		{put, "/tasks/:id/launch_policy", admin, adm, nil, a.setLaunchPolicy},
		{put, "/tasks/:id/destinations", admin, adm, nil, a.setDestinations},
		{get, "/executions", viewer, read, append(listQuery, "task_id", "status", "created_after", "created_before"), a.listExecutions},
		{get, "/executions/:id", viewer, read, nil, a.getExecution},
		{get, "/executions/:id/steps", viewer, read, listQuery, a.listSteps},
		{post, "/executions/:id/continue", member, run, nil, a.continueExecution},
		{post, "/executions/:id/cancel", member, run, nil, a.cancelExecution},
		{del, "/executions/:id", admin, adm, nil, a.deleteExecution},
		{get, "/usage", viewer, read, nil, a.getUsage},
	}
}

// routes is every route the API serves: the table above, then those of
// files.go and webhooks.go.
func (a *API) routes() []route {
	rs := a.coreRoutes()
	rs = append(rs, a.fileRoutes()...)
	rs = append(rs, a.approvalRoutes()...)
	rs = append(rs, a.playbookRoutes()...)
	return append(rs, a.webhookRoutes()...)
}

// Register mounts every route of SPEC §7.2 for tasks, executions and usage
// on g, which the app creates at BasePath with Middlewares. A path asked
// with a method it does not serve gets 405 method_not_allowed with Allow.
func (a *API) Register(g *echo.Group) {
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range a.routes() {
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
