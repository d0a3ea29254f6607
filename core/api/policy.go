package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/store"
)

// orgInfo is the caller's organisation and what its plan allows.
type orgInfo struct {
	id       string
	planName string
	plan     plans.Plan
}

// orgFor returns the caller's organisation and its plan (core/plans: read
// at most once per plans.CacheTTL, the default plan for a plan that is not
// configured), provisioning it on first sight when AutoProvision is on
// (with the example tasks when ExampleTasks is on); otherwise an unknown
// organisation is 403 org_not_provisioned.
func (a *API) orgFor(ctx context.Context, p *auth.Principal) (orgInfo, error) {
	if p.OrgID == "" {
		return orgInfo{}, problem(http.StatusForbidden, "org_not_provisioned", "Forbidden",
			"The access token names no organisation.", "Sign in again through an organisation.")
	}
	res, err := a.plans.For(ctx, p.OrgID)
	if errors.Is(err, plans.ErrNoOrganisation) {
		if !a.autoProvision {
			return orgInfo{}, problem(http.StatusForbidden, "org_not_provisioned", "Forbidden",
				"Your organisation has no Kadu account on this server.",
				"Ask the operator of this Kadu server to provision your organisation; nothing can be done with this token until then.")
		}
		var org store.Org
		if org, err = a.provision(ctx, p.OrgID); err != nil {
			return orgInfo{}, err
		}
		a.plans.Remember(org.ID, org.Plan)
		res, err = a.plans.For(ctx, org.ID)
	}
	if err != nil {
		return orgInfo{}, err
	}
	return orgInfo{id: p.OrgID, planName: res.Name, plan: res.Plan}, nil
}

// provision creates the organisation with the default plan and, when it is
// new and ExampleTasks is on, its example tasks, in one transaction: of
// concurrent first requests exactly one creates them.
func (a *API) provision(ctx context.Context, orgID string) (store.Org, error) {
	var org store.Org
	var created bool
	var tasks int
	err := a.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		org, created, err = tx.EnsureOrg(ctx, orgID, a.plans.Default().Name)
		if err != nil || !created || !a.exampleTasks {
			return err
		}
		for _, t := range exampleTasks(a.plans.Default().Plan) {
			if _, err := tx.CreateTask(ctx, orgID, t); err != nil {
				return err
			}
			tasks++
		}
		return nil
	})
	if err != nil {
		return store.Org{}, err
	}
	if created {
		a.log.InfoContext(ctx, "api: organisation provisioned", slog.String("org_id", orgID),
			slog.String("plan", org.Plan), slog.Int("example_tasks", tasks))
	}
	return org, nil
}

// authorize applies a route's minimum role, then its scope (docs/reference/auth.md:
// effective permission is role ∩ scopes). A role too low is 403
// forbidden_role (stepping up would not help); a missing scope is the 403
// step-up challenge, insufficient_scope with WWW-Authenticate.
func (a *API) authorize(r *http.Request, p *auth.Principal, minRole auth.Role, scope string) error {
	if !p.Role.AtLeast(minRole) {
		return errForbiddenRole("This operation requires the " + string(minRole) + " role or above; your role is " + roleName(p.Role) + ".")
	}
	if p.HasScope(scope) {
		return nil
	}
	e := problem(http.StatusForbidden, "insufficient_scope", "Forbidden",
		"The access token lacks the "+scope+" scope this operation requires.",
		"Ask the authorization server for the scopes listed in WWW-Authenticate, then retry.")
	h := http.Header{}
	if a.challenger != nil {
		a.challenger.InsufficientScope(r, p, scope).SetHeaders(h)
	} else {
		h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+
			strings.Join(auth.CloseScopes(append(slices.Clone(p.Scopes), scope)), " ")+`"`)
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate")
	}
	e.Header = h
	return e
}

func errForbiddenRole(detail string) *Error {
	return problem(http.StatusForbidden, "forbidden_role", "Forbidden", detail,
		"Ask an admin of your organisation to do it, or to change your role or the task's launch policy.")
}

func roleName(r auth.Role) string {
	if r == "" {
		return "none"
	}
	return string(r)
}

// mayLaunch applies a task's launch policy (the route already required
// member): admins and owners always may; otherwise anyone when the policy
// is empty, else those whose role or user id it lists.
func mayLaunch(p *auth.Principal, lp store.LaunchPolicy) error {
	if p.Role.AtLeast(auth.RoleAdmin) || (len(lp.Roles) == 0 && len(lp.UserIDs) == 0) ||
		slices.Contains(lp.Roles, string(p.Role)) || slices.Contains(lp.UserIDs, p.Subject) {
		return nil
	}
	return errForbiddenRole("This task's launch policy does not include you (role " + roleName(p.Role) + ").")
}

// mayControl says whether p may continue or cancel e: its launcher, or an
// admin.
func mayControl(p *auth.Principal, e store.Execution) error {
	if p.Role.AtLeast(auth.RoleAdmin) || (p.Subject != "" && p.Subject == e.LaunchedBy) {
		return nil
	}
	return errForbiddenRole("Only the person who launched this execution, or an admin, may do this.")
}
