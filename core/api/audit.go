package api

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kobana/kadu/core/store"
)

// Reading the audit trail (docs/audit.md#reading-the-trail). The route
// table gives both routes the admin role and the admin scope: the trail
// names every person of the organisation and what they did. An
// organisation reads only its own chain; installation-wide events (bundles,
// configuration) are the operator's, read with `kadu audit export`.

// Longest accepted text filters: longer than any stored value can be, so
// refusing them only stops a mistake early.
const (
	maxAuditSubjectLen = 255
	maxAuditNameLen    = 200
)

func (a *API) auditHandlers() map[string]handler {
	return map[string]handler{
		"GET /audit_events":      a.listAuditEvents,
		"GET /audit_events/{id}": a.getAuditEvent,
	}
}

// auditEventJSON is an event on the wire: every member of the stored event,
// so that an auditor can recompute hash from it (docs/audit.md#the-hash).
// Absent values are null, as everywhere in the API.
type auditEventJSON struct {
	ID         string   `json:"id"`
	OrgID      string   `json:"org_id"`
	Seq        int64    `json:"seq"`
	OccurredAt string   `json:"occurred_at"`
	Action     string   `json:"action"`
	Surface    string   `json:"surface"`
	Issuer     *string  `json:"issuer"`
	Subject    *string  `json:"subject"`
	Role       *string  `json:"role"`
	Scopes     []string `json:"scopes"`
	ClientID   *string  `json:"client_id"`
	ClientName *string  `json:"client_name"`
	Tool       *string  `json:"tool"`
	Route      *string  `json:"route"`
	ResourceID *string  `json:"resource_id"`
	ArgsDigest *string  `json:"args_digest"`
	Outcome    string   `json:"outcome"`
	Status     *int     `json:"status"`
	Detail     *string  `json:"detail"`
	RequestID  *string  `json:"request_id"`
	TraceID    *string  `json:"trace_id"`
	PrevHash   *string  `json:"prev_hash"`
	Hash       string   `json:"hash"`
}

func renderAuditEvent(e store.AuditEvent) auditEventJSON {
	return auditEventJSON{
		ID:         e.ID,
		OrgID:      e.OrgID,
		Seq:        e.Seq,
		OccurredAt: ts(e.OccurredAt),
		Action:     e.Action,
		Surface:    e.Surface,
		Issuer:     strPtr(e.Issuer),
		Subject:    strPtr(e.Subject),
		Role:       strPtr(e.Role),
		Scopes:     nonNil(e.Scopes),
		ClientID:   strPtr(e.ClientID),
		ClientName: strPtr(e.ClientName),
		Tool:       strPtr(e.Tool),
		Route:      strPtr(e.Route),
		ResourceID: strPtr(e.ResourceID),
		ArgsDigest: strPtr(e.ArgsDigest),
		Outcome:    e.Outcome,
		Status:     intPtr(e.Status),
		Detail:     strPtr(e.Detail),
		RequestID:  strPtr(e.RequestID),
		TraceID:    strPtr(e.TraceID),
		PrevHash:   strPtr(e.PrevHash),
		Hash:       e.Hash,
	}
}

// auditOutcomes are the outcomes a filter may name.
var auditOutcomes = []string{store.OutcomeSucceeded, store.OutcomeFailed, store.OutcomeDeclined}

// auditFilter reads the filters of GET /audit_events, each problem a 422
// naming its parameter.
func auditFilter(q url.Values) (store.AuditFilter, error) {
	var f store.AuditFilter
	var v validation
	f.Since = timeParam(&v, q.Get("since"), "since")
	f.Until = timeParam(&v, q.Get("until"), "until")
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		v.add("until", "until must be later than since.", "Swap the two, or widen the range.")
	}
	f.Subject = textParam(&v, q, "subject", maxAuditSubjectLen, "the sub of the person, as the access token names them")
	f.Tool = textParam(&v, q, "tool", maxAuditNameLen, "an MCP tool's name, e.g. kadu_tasks_run")
	f.Route = textParam(&v, q, "route", maxAuditNameLen, "a method and a route of the table, e.g. POST /api/v1/tasks/{id}/run")
	if f.Route != "" {
		if m, p, ok := strings.Cut(f.Route, " "); !ok || m == "" || m != strings.ToUpper(m) || !strings.HasPrefix(p, BasePath+"/") {
			v.add("route", fmt.Sprintf("route is %q, not a method and a path under %s.", f.Route, BasePath),
				"Give the route as the table spells it, e.g. POST /api/v1/tasks/{id}/run.")
		}
	}
	f.Action = textParam(&v, q, "action", maxAuditNameLen, "e.g. rest.write or approval.approved")
	if s := q.Get("outcome"); s != "" {
		f.Outcome = s
		if !slices.Contains(auditOutcomes, s) {
			v.add("outcome", fmt.Sprintf("outcome is %q, not an audit outcome.", s),
				"Use one of: "+strings.Join(auditOutcomes, ", ")+".")
		}
	}
	return f, v.err()
}

// textParam reads a free-text filter: one line of valid UTF-8, at most
// maxLen bytes.
func textParam(v *validation, q url.Values, name string, maxLen int, what string) string {
	s := q.Get(name)
	if s == "" {
		return ""
	}
	if len(s) > maxLen || !utf8.ValidString(s) || strings.ContainsAny(s, "\r\n\x00") {
		v.add(name, fmt.Sprintf("%s is not one line of at most %d bytes.", name, maxLen), "Give "+what+".")
		return ""
	}
	return s
}

func (a *API) listAuditEvents(c *call) (*reply, error) {
	q := c.echo.QueryParams()
	f, err := auditFilter(q)
	if err != nil {
		return nil, err
	}
	filter := strings.Join([]string{"audit_events", c.org.id, tsOrEmpty(f.Since), tsOrEmpty(f.Until),
		f.Subject, f.Tool, f.Route, f.Action, f.Outcome}, "\x00")
	p, err := a.parsePage(q, filter)
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListAudit(c.ctx(), c.org.id, f, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, fmt.Errorf("api: list audit events: %w", err)
	}
	items := make([]auditEventJSON, 0, len(pg.Items))
	last := ""
	for _, e := range pg.Items {
		items = append(items, renderAuditEvent(e))
		last = e.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

// getAuditEvent answers one event of the caller's organisation: 404 for a
// malformed id and another organisation's event alike.
func (a *API) getAuditEvent(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixAudit, id) {
		return nil, errNotFound("Audit event " + id)
	}
	e, err := a.db.GetAudit(c.ctx(), c.org.id, id)
	if err != nil {
		return nil, storeErr(err, "Audit event "+id)
	}
	return ok(renderAuditEvent(e))
}
