package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// handler is one route's business logic. It returns the reply to send, or
// an error (an *Error for the client, anything else is a 500). It does not
// write the response: serve does, so that idempotency can store it.
type handler func(c *call) (*reply, error)

// call is what a handler gets: the caller and the request.
type call struct {
	echo echo.Context
	p    *auth.Principal // never nil
	org  orgInfo
	body *object // mutating routes: the JSON body, without idempotency_key; nil for GET
	// audit is the event of a write (auditlog.go); nil for GET.
	audit *writeAudit
}

func (c *call) ctx() context.Context { return c.echo.Request().Context() }

// param returns a path parameter.
func (c *call) param(name string) string { return c.echo.Param(name) }

// reply is a handler's successful answer.
type reply struct {
	status   int
	body     any
	location string // Location header, for 201 and 202
}

func ok(body any) (*reply, error) { return &reply{status: http.StatusOK, body: body}, nil }

// serve adapts a route to Echo: organisation, role × scope, query
// parameters, body, idempotency, then the handler; it writes the reply.
// A write is recorded in the audit trail once its organisation is known
// (auditlog.go).
func (a *API) serve(rt route) echo.HandlerFunc {
	mutating := rt.method != http.MethodGet
	return func(ec echo.Context) error {
		req := ec.Request()
		p, found := auth.PrincipalFrom(req.Context())
		if !found {
			return problem(http.StatusUnauthorized, "unauthorized", "Unauthorized",
				"The request has no verified access token.", "Send Authorization: Bearer with an access token for this server.")
		}
		// A route a tool call dispatched in-process stays that call's
		// (surface mcp, its tool and request id): WithCall keeps the outer.
		ctx := audit.WithCall(req.Context(), audit.Call{Surface: store.SurfaceREST, RequestID: requestID(ec)})
		ec.SetRequest(req.WithContext(ctx))
		org, err := a.orgFor(ctx, p)
		if err != nil {
			return err
		}
		c := &call{echo: ec, p: p, org: org}
		if !mutating {
			return a.handle(c, rt)
		}
		c.audit = beginWrite(ctx, ec, rt, p)
		return a.recordWrite(c, func() error { return a.handle(c, rt) })
	}
}

// handle checks role × scope and the query, reads a write's body, and runs
// the handler, under idempotency when the write carries a key.
func (a *API) handle(c *call, rt route) error {
	ec := c.echo
	if err := a.authorize(ec.Request(), c.p, rt.role, rt.scope); err != nil {
		return err
	}
	if err := checkQuery(ec.QueryParams(), rt.query); err != nil {
		return err
	}
	if c.audit != nil {
		body, key, err := readBody(ec)
		if err != nil {
			return err
		}
		c.body = body
		c.audit.body(body)
		if key != "" {
			return a.idempotent(c, rt, key)
		}
	}
	rep, err := a.runHandler(c, rt)
	if err != nil {
		return err
	}
	return writeReply(ec, rep.status, encode(rep.body), rep.location, false)
}

// encode renders a reply body as JSON: HTML characters unescaped (the
// content type is JSON; no browser renders it as HTML), a final newline.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a RawMessage holding invalid JSON can fail; the store
		// returns what was validated on the way in.
		panic(fmt.Sprintf("api: encoding reply: %v", err))
	}
	return buf.Bytes()
}

func writeReply(c echo.Context, status int, body []byte, location string, replayed bool) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	if location != "" {
		h.Set("Location", location)
	}
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	return c.JSONBlob(status, body)
}
