package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/kobana/kadu/core/canonjson"
	"github.com/kobana/kadu/core/store"
)

// Idempotency (docs/reference/rest.md#conventions, Stripe semantics). A write that carries a key
// claims (organisation, key) with the method, the path and a digest of its
// canonical body (RFC 8785, without the key itself), then:
//
//   - the same request again gets the stored status and body with
//     Idempotent-Replayed: true;
//   - the key with another method, path or body gets 422
//     idempotency_key_reused;
//   - while the first request runs, 409 idempotency_key_in_use.
//
// What is stored is what the endpoint decided: a success, or 402
// (cost_cap_exceeded, plan_limit_exceeded), 404 and 409 invalid_state.
// Requests refused before the endpoint acted (400, 401, 403, 413, 415,
// 422) and failures on our side (5xx) store nothing: the key is released,
// so the client can fix the request, or simply retry, with the same key.

// idempotent runs rt's handler for c under key.
func (a *API) idempotent(c *call, rt route, key string) error {
	req := c.echo.Request()
	// The record must be completed or released even if the client goes
	// away mid-request.
	ctx := context.WithoutCancel(req.Context())
	orgID := c.org.id

	digest, err := bodyDigest(req.Method, req.URL.Path, c.body.m)
	if err != nil {
		return err
	}
	rec, err := a.db.BeginIdempotent(ctx, orgID, key, req.Method, req.URL.Path, digest, a.now())
	switch {
	case errors.Is(err, store.ErrIdempotencyMismatch):
		return paramProblem(http.StatusUnprocessableEntity, "idempotency_key_reused", idempotencyKeyField,
			"This idempotency_key was already used for a different request (method, path or body).",
			"Use a new idempotency_key for a new request; reuse a key only to retry the very same request.")
	case errors.Is(err, store.ErrIdempotencyInFlight):
		e := paramProblem(http.StatusConflict, "idempotency_key_in_use", idempotencyKeyField,
			"A request with this idempotency_key is still being processed.",
			"Wait a moment and retry the same request with the same key to get its result. If the first request was lost with its server, the key is freed once the longest a request may run (the server's http.write_timeout, plus 30 s) has passed.")
		// A live request ends within http.write_timeout, usually far
		// sooner: a retry each second finds its answer soon after it does.
		e.RetryAfter = 1
		return e
	case err != nil:
		return err
	case rec.Completed():
		if c.audit != nil {
			c.audit.replayed = true
		}
		return writeReply(c.echo, rec.ResponseStatus, rec.ResponseBody, replayLocation(rec.ResponseStatus, rec.ResponseBody), true)
	}

	settled := false
	defer func() {
		if !settled { // a panic, or an answer we do not store
			if err := a.db.AbandonIdempotent(ctx, orgID, key); err != nil {
				a.log.ErrorContext(ctx, "api: releasing idempotency key", slog.String("org_id", orgID), slog.Any("error", err))
			}
		}
	}()
	rep, herr := a.runHandler(c, rt)
	var status int
	var body []byte
	var location string
	var ae *Error
	switch {
	case herr == nil:
		status, body, location = rep.status, encode(rep.body), rep.location
	case errors.As(herr, &ae) && storedError(ae):
		status, body = ae.Status, encode(ae.body(requestID(c.echo)))
		if c.audit != nil && len(ae.Problems) > 0 {
			c.audit.stored = ae.Problems[0].Code
		}
	default:
		return herr
	}
	if err := a.db.CompleteIdempotent(ctx, orgID, key, status, body); err != nil {
		// The request did its work: answer it. The key stays in flight until
		// the store's idempotency lock runs out (http.write_timeout + 30 s,
		// core/app/deadline.go); a retry meanwhile gets 409.
		a.log.ErrorContext(ctx, "api: storing idempotent response", slog.String("org_id", orgID), slog.Any("error", err))
	}
	settled = true
	if ae != nil {
		ae.setHeaders(c.echo.Response().Header())
	}
	return writeReply(c.echo, status, body, location, false)
}

// storedError reports whether an error answer is the endpoint's decision,
// replayed to a retry, rather than a refusal to be retried after a fix.
func storedError(e *Error) bool {
	switch e.Status {
	case http.StatusPaymentRequired, http.StatusNotFound:
		return true
	case http.StatusConflict:
		return len(e.Problems) > 0 && e.Problems[0].Code == "invalid_state"
	}
	return false
}

// bodyDigest is the hex SHA-256 of method, path and the canonical body.
func bodyDigest(method, path string, body map[string]json.RawMessage) (string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", errBadRequest("The body is not valid JSON.")
	}
	canon, err := canonjson.Transform(raw)
	if err != nil {
		return "", errBadRequest("With an idempotency_key, every number in the body must be exactly representable as a double (about 15 significant digits); send larger values as strings.")
	}
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// replayLocation rebuilds the Location of a replayed 201 or 202 from the
// id in its body (file.id for POST /files).
func replayLocation(status int, body []byte) string {
	if status != http.StatusCreated && status != http.StatusAccepted {
		return ""
	}
	var v struct {
		ID   string `json:"id"`
		File struct {
			ID string `json:"id"`
		} `json:"file"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return location(cmp.Or(v.ID, v.File.ID))
}

// location is the URL path of the resource id, or "" for an unknown kind.
func location(id string) string {
	switch {
	case strings.HasPrefix(id, store.PrefixTask):
		return BasePath + "/tasks/" + id
	case strings.HasPrefix(id, store.PrefixExecution):
		return BasePath + "/executions/" + id
	case strings.HasPrefix(id, store.PrefixFile):
		return BasePath + "/files/" + id
	case strings.HasPrefix(id, store.PrefixWebhook):
		return BasePath + "/webhooks/" + id
	case strings.HasPrefix(id, store.PrefixDelivery):
		return BasePath + "/webhook_deliveries/" + id
	}
	return ""
}
