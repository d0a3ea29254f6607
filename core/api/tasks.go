package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// Task field limits.
const (
	maxNameLen         = 200
	maxDescriptionLen  = 2000
	maxInstructionsLen = 50000
	maxQueryLen        = 200

	// DefaultTimeoutSeconds is a new task's timeout_seconds when the request
	// leaves it out.
	DefaultTimeoutSeconds = 900
	maxTimeoutSeconds     = 86400

	maxUserIDs      = 100
	maxDestinations = 10
)

var (
	createTaskFields = []string{"name", "description", "instructions", "input_schema", "playbook",
		"launch_policy", "destinations", "max_cost_cents", "timeout_seconds"}
	patchTaskFields = []string{"name", "description", "instructions", "input_schema", "playbook",
		"max_cost_cents", "timeout_seconds"}
)

// defaultInputSchema is a task's input_schema when it is created without
// one: any JSON object.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

func (a *API) listTasks(c *call) (*reply, error) {
	q := c.echo.QueryParam("q")
	if n := utf8.RuneCountInString(q); n > maxQueryLen {
		return nil, paramProblem(http.StatusUnprocessableEntity, "validation_error", "q",
			fmt.Sprintf("q has %d characters; the most is %d.", n, maxQueryLen), "Search for a shorter part of the name or description.")
	}
	p, err := a.parsePage(c.echo.QueryParams(), "tasks\x00"+c.org.id+"\x00"+q)
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListTasks(c.ctx(), c.org.id, q, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, err
	}
	items := make([]taskJSON, 0, len(pg.Items))
	last := ""
	for _, t := range pg.Items {
		items = append(items, renderTask(t))
		last = t.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

func (a *API) getTask(c *call) (*reply, error) {
	t, err := a.task(c)
	if err != nil {
		return nil, err
	}
	return ok(renderTask(t))
}

// task loads the task named by the path: 404 for a malformed id, another
// organisation's task or a deleted one alike.
func (a *API) task(c *call) (store.Task, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixTask, id) {
		return store.Task{}, errNotFound("Task " + id)
	}
	t, err := a.db.GetTask(c.ctx(), c.org.id, id)
	return t, storeErr(err, "Task "+id)
}

// storeErr maps the store's errors to answers: ErrNotFound is 404 (what
// names the resource), ErrConflict 409 invalid_state; others are 500s.
func storeErr(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return errNotFound(what)
	case errors.Is(err, store.ErrConflict):
		return errInvalidState(what+" changed meanwhile.", "Get it again and retry if it still applies.")
	}
	return err
}

func (a *API) createTask(c *call) (*reply, error) {
	o := c.body
	o.allow(createTaskFields...)
	t := store.Task{
		InputSchema:    defaultInputSchema,
		MaxCostCents:   c.org.plan.MaxCostPerExecutionCents,
		TimeoutSeconds: DefaultTimeoutSeconds,
	}
	if o.require("name", "Give the task a short name, e.g. \"Conciliação diária\".") {
		t.Name, _ = taskName(o)
	}
	t.Description, _ = o.str("description", maxDescriptionLen, false)
	t.Instructions, _ = o.str("instructions", maxInstructionsLen, false)
	if s, ok := a.inputSchema(o); ok {
		t.InputSchema = s
	}
	t.Playbook, _ = a.playbook(o)
	if lp, ok := o.nested("launch_policy"); ok {
		t.LaunchPolicy = launchPolicy(lp)
	}
	var err error
	if t.Destinations, err = a.destinations(c, o); err != nil {
		return nil, err
	}
	if n, ok := o.integer("max_cost_cents", 1, c.org.plan.MaxCostPerExecutionCents); ok {
		t.MaxCostCents = n
	}
	if n, ok := o.integer("timeout_seconds", 1, maxTimeoutSeconds); ok {
		t.TimeoutSeconds = int(n)
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	t, err = a.db.CreateTask(c.ctx(), c.org.id, t)
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: renderTask(t), location: location(t.ID)}, nil
}

func (a *API) updateTask(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixTask, id) {
		return nil, errNotFound("Task " + id)
	}
	o := c.body
	for _, field := range []string{"launch_policy", "destinations"} {
		if o.has(field) {
			delete(o.m, field)
			o.fail(field, "cannot be changed with PATCH.", "Use PUT /tasks/{id}/"+field+" to replace it.")
		}
	}
	o.allow(patchTaskFields...)
	var patch store.TaskPatch
	changed := len(o.m) > 0
	if o.has("name") {
		if s, ok := taskName(o); ok {
			patch.Name = &s
		}
	}
	if s, ok := o.str("description", maxDescriptionLen, false); ok {
		patch.Description = &s
	}
	if s, ok := o.str("instructions", maxInstructionsLen, false); ok {
		patch.Instructions = &s
	}
	if s, ok := a.inputSchema(o); ok {
		patch.InputSchema = &s
	}
	if pb, ok := a.playbook(o); ok {
		patch.Playbook = &pb
	}
	if n, ok := o.integer("max_cost_cents", 1, c.org.plan.MaxCostPerExecutionCents); ok {
		patch.MaxCostCents = &n
	}
	if n, ok := o.integer("timeout_seconds", 1, maxTimeoutSeconds); ok {
		secs := int(n)
		patch.TimeoutSeconds = &secs
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	if !changed {
		return nil, problem(http.StatusUnprocessableEntity, "validation_error", "Nothing to change",
			"The body sets no field.", "Send at least one of: "+strings.Join(patchTaskFields, ", ")+".")
	}
	t, err := a.db.UpdateTask(c.ctx(), c.org.id, id, patch)
	if err != nil {
		return nil, storeErr(err, "Task "+id)
	}
	return ok(renderTask(t))
}

func (a *API) deleteTask(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixTask, id) {
		return nil, errNotFound("Task " + id)
	}
	c.body.allow()
	if err := c.body.err(); err != nil {
		return nil, err
	}
	if err := a.db.SoftDeleteTask(c.ctx(), c.org.id, id); err != nil {
		return nil, storeErr(err, "Task "+id)
	}
	return ok(deletedJSON{ID: id, Deleted: true})
}

func (a *API) setLaunchPolicy(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixTask, id) {
		return nil, errNotFound("Task " + id)
	}
	lp := launchPolicy(c.body)
	if err := c.body.err(); err != nil {
		return nil, err
	}
	t, err := a.db.SetLaunchPolicy(c.ctx(), c.org.id, id, lp)
	if err != nil {
		return nil, storeErr(err, "Task "+id)
	}
	return ok(renderTask(t))
}

func (a *API) setDestinations(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixTask, id) {
		return nil, errNotFound("Task " + id)
	}
	o := c.body
	o.allow("destinations")
	var ds []store.Destination
	if o.require("destinations", "Send the full list, [] for none.") {
		var err error
		if ds, err = a.destinations(c, o); err != nil {
			return nil, err
		}
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	t, err := a.db.SetDestinations(c.ctx(), c.org.id, id, ds)
	if err != nil {
		return nil, storeErr(err, "Task "+id)
	}
	return ok(renderTask(t))
}

// taskName reads and trims name.
func taskName(o *object) (string, bool) {
	s, ok := o.str("name", maxNameLen, true)
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	if s == "" {
		o.fail("name", "is blank.", "Give the task a short name.")
		return "", false
	}
	return s, true
}

// inputSchema reads input_schema: a JSON Schema (2020-12) object that
// compiles, whose examples, if any, are objects valid against it. ok is
// false when it is absent or wrong.
func (a *API) inputSchema(o *object) (json.RawMessage, bool) {
	if !o.has("input_schema") {
		return nil, false
	}
	hint := "Send a JSON Schema (draft 2020-12) object describing the task's input, e.g. {\"type\":\"object\",\"properties\":{…},\"examples\":[{…}]}."
	raw, ok := o.raw("input_schema")
	if !ok || raw[0] != '{' {
		o.fail("input_schema", "must be a JSON Schema object.", hint)
		return nil, false
	}
	var doc struct {
		Type     any               `json:"type"`
		Examples []json.RawMessage `json:"examples"`
	}
	_ = json.Unmarshal(raw, &doc) // the compiler reports what is wrong with it
	if doc.Type != nil && doc.Type != "object" {
		o.fail("input_schema", "must describe an object (\"type\": \"object\"): an execution's input is always a JSON object.", hint)
		return nil, false
	}
	schema, err := compileSchema(raw)
	if err != nil {
		o.fail("input_schema", "does not compile: "+strings.TrimPrefix(err.Error(), "input_schema: "), hint)
		return nil, false
	}
	good := true
	for i, ex := range doc.Examples {
		param := fmt.Sprintf("input_schema.examples[%d]", i)
		if len(ex) == 0 || ex[0] != '{' {
			o.v.add(param, param+" must be a JSON object, like an execution's input.", "Fix or remove the example.")
			good = false
			continue
		}
		if err := validateAgainst(schema, ex, param, "Fix the example so that it is valid against the schema, or remove it."); err != nil {
			var ae *Error
			if !errors.As(err, &ae) {
				return nil, false
			}
			o.v.problems = append(o.v.problems, ae.Problems...)
			good = false
		}
	}
	if !good {
		return nil, false
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw) // valid: it compiled
	return buf.Bytes(), true
}

// playbook reads playbook: a JSON object or array, checked by
// ValidatePlaybook when one is configured. ok is false when it is absent or
// wrong.
func (a *API) playbook(o *object) (json.RawMessage, bool) {
	if !o.has("playbook") {
		return nil, false
	}
	hint := "Send the playbook as a JSON object {\"version\":1,\"steps\":[…]} (see the playbook reference)."
	raw, ok := o.raw("playbook")
	if !ok || (raw[0] != '{' && raw[0] != '[') {
		o.fail("playbook", "must be a JSON object or array.", hint)
		return nil, false
	}
	if a.validatePlaybook != nil {
		if _, err := a.validatePlaybook(raw); err != nil {
			o.fail("playbook", "is not valid: "+err.Error(), "Fix the steps named, then save the task again.")
			return nil, false
		}
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	return buf.Bytes(), true
}

// launchPolicy reads {roles, user_ids} from o; a missing list is empty.
func launchPolicy(o *object) store.LaunchPolicy {
	o.allow("roles", "user_ids")
	lp := store.LaunchPolicy{Roles: []string{}, UserIDs: []string{}}
	if roles, ok := o.strings("roles", 4, checkLaunchRole); ok {
		lp.Roles = roles
	}
	if ids, ok := o.strings("user_ids", maxUserIDs, checkUserID); ok {
		lp.UserIDs = ids
	}
	return lp
}

func checkLaunchRole(s string) string {
	r, err := auth.ParseRole(s)
	switch {
	case err != nil:
		return fmt.Sprintf("is %q; want member, admin or owner.", s)
	case r == auth.RoleViewer:
		return "is viewer, who can never run tasks (running requires member or above); want member, admin or owner."
	}
	return ""
}

func checkUserID(s string) string {
	if s == "" || utf8.RuneCountInString(s) > 255 || strings.ContainsFunc(s, unicode.IsControl) {
		return "must be a user id (the token's subject) of 1 to 255 characters."
	}
	return ""
}

// destinations reads the destinations list (see destinationsShape) and
// records a problem at destinations[i].webhook_id for every webhook that
// is not a live webhook of the caller's organisation. Another
// organisation's webhook, a deleted one and one that never existed get the
// same answer, so the check does not leak what other organisations have.
// The error is a store failure; problems go to o.
//
// The check holds when the list is written. A webhook deleted later stays
// in the list (GET shows it) until the next PUT, which must leave it out:
// PUT checks the whole list again.
func (a *API) destinations(c *call, o *object) ([]store.Destination, error) {
	ds, ok := destinationsShape(o)
	if !ok {
		return ds, nil
	}
	for i, d := range ds {
		_, err := a.db.GetWebhook(c.ctx(), c.org.id, d.WebhookID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			o.fail(fmt.Sprintf("destinations[%d].webhook_id", i),
				fmt.Sprintf("is %q, which is not one of your organisation's webhooks.", d.WebhookID),
				"Use the id of an existing webhook (kadu_webhooks_list, GET /webhooks), create the webhook first, or remove this destination.")
		case err != nil:
			return nil, fmt.Errorf("checking destination webhook %s: %w", d.WebhookID, err)
		}
	}
	return ds, nil
}

// destinationsShape reads the destinations list: up to 10 distinct
// {type:"webhook", webhook_id:"whk_…"}, checked for shape only.
func destinationsShape(o *object) ([]store.Destination, bool) {
	raw, ok := o.raw("destinations")
	if !ok {
		if o.has("destinations") {
			o.fail("destinations", "must be an array.", "Send [] for none.")
		}
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		o.fail("destinations", "must be an array of {\"type\":\"webhook\",\"webhook_id\":\"whk_…\"}.", "Send [] for none.")
		return nil, false
	}
	if len(items) > maxDestinations {
		o.fail("destinations", fmt.Sprintf("has %d items; the most is %d.", len(items), maxDestinations), "Send fewer destinations.")
		return nil, false
	}
	out := make([]store.Destination, 0, len(items))
	good := true
	for i, it := range items {
		name := fmt.Sprintf("destinations[%d]", i)
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) != nil || m == nil {
			o.fail(name, "must be an object {\"type\":\"webhook\",\"webhook_id\":\"whk_…\"}.", "Fix or remove it.")
			good = false
			continue
		}
		d := &object{m: m, prefix: o.prefix + name + ".", v: o.v}
		d.allow("type", "webhook_id")
		before := len(o.v.problems)
		var typ, wid string
		if d.require("type", "Set \"type\": \"webhook\".") {
			if typ, ok = d.str("type", 20, true); ok && typ != "webhook" {
				d.fail("type", fmt.Sprintf("is %q; the only type is \"webhook\".", typ), "Set \"type\": \"webhook\".")
			}
		}
		if d.require("webhook_id", "Name the webhook by its id (whk_…).") {
			if wid, ok = d.str("webhook_id", 64, true); ok && !store.ValidID(store.PrefixWebhook, wid) {
				d.fail("webhook_id", fmt.Sprintf("is %q, not a webhook id (whk_ followed by 32 hex digits).", wid), "Use the id of one of your webhooks.")
			}
		}
		if len(o.v.problems) > before {
			good = false
			continue
		}
		for _, prev := range out {
			if prev.WebhookID == wid {
				o.fail(name, "repeats webhook "+wid+".", "List each webhook once.")
				good = false
			}
		}
		out = append(out, store.Destination{Type: typ, WebhookID: wid})
	}
	return out, good
}
