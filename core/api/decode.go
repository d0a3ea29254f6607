package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// idempotencyKeyField is the body member (and, as Idempotency-Key, the
// header) that carries an idempotency key (docs/reference/rest.md#conventions).
const idempotencyKeyField = "idempotency_key"

// maxIdempotencyKey is the longest key, in characters.
const maxIdempotencyKey = 255

// readBody reads a write's body: a JSON object (an empty body is {}), with
// idempotency_key taken out and returned apart, merged with the
// Idempotency-Key header. Bad JSON is 400, a body over the limit 413, a
// content type other than JSON 415.
func readBody(c echo.Context) (*object, string, error) {
	r := c.Request()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, "", echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		return nil, "", errBadRequest("The body could not be read.")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	} else if ct := r.Header.Get(echo.HeaderContentType); ct != "" {
		// No Content-Type is taken as JSON; another type is refused.
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != echo.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
			return nil, "", echo.NewHTTPError(http.StatusUnsupportedMediaType)
		}
	}
	if raw[0] != '{' {
		return nil, "", errBadRequest("The body must be a JSON object.")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", errBadRequest("The body is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ") + ".")
	}
	o := &object{m: m, v: &validation{}}

	var key string
	if v, ok := m[idempotencyKeyField]; ok {
		delete(m, idempotencyKeyField)
		if string(v) != "null" { // null: no key
			if json.Unmarshal(v, &key) != nil {
				return nil, "", paramProblem(http.StatusUnprocessableEntity, "validation_error", idempotencyKeyField,
					"idempotency_key must be a string.", "Send a unique string of 1 to 255 characters, e.g. a UUID.")
			}
			if key == "" {
				return nil, "", badKey("idempotency_key is empty.")
			}
		}
	}
	switch hs := r.Header.Values("Idempotency-Key"); {
	case len(hs) > 1:
		return nil, "", paramProblem(http.StatusBadRequest, "bad_request", idempotencyKeyField,
			"The Idempotency-Key header is repeated.", "Send one Idempotency-Key header.")
	case len(hs) == 1 && key != "" && hs[0] != key:
		return nil, "", paramProblem(http.StatusBadRequest, "bad_request", idempotencyKeyField,
			"The Idempotency-Key header and the body's idempotency_key differ.",
			"Send the key once (body or header), or the same value in both.")
	case len(hs) == 1:
		if hs[0] == "" {
			return nil, "", badKey("The Idempotency-Key header is empty.")
		}
		key = hs[0]
	}
	if key != "" {
		if n := utf8.RuneCountInString(key); n > maxIdempotencyKey || !utf8.ValidString(key) {
			return nil, "", badKey(fmt.Sprintf("idempotency_key has %d characters; the most is %d.", n, maxIdempotencyKey))
		}
		if strings.ContainsFunc(key, unicode.IsControl) {
			return nil, "", badKey("idempotency_key contains control characters.")
		}
	}
	return o, key, nil
}

func badKey(detail string) *Error {
	return paramProblem(http.StatusUnprocessableEntity, "validation_error", idempotencyKeyField, detail,
		"Send a unique string of 1 to 255 characters, e.g. a UUID.")
}

// object is a request body being validated member by member: each
// accessor records a 422 problem naming its param when the member is
// missing or wrong, so that one answer lists every mistake.
type object struct {
	m      map[string]json.RawMessage
	prefix string      // "" at the top; "launch_policy." for a nested object
	v      *validation // shared with nested objects
}

// err returns the 422 listing every problem recorded, or nil.
func (o *object) err() error { return o.v.err() }

func (o *object) fail(name, detail, hint string) {
	o.v.add(o.prefix+name, o.prefix+name+" "+detail, hint)
}

// allow records a problem for every member not in names.
func (o *object) allow(names ...string) {
	for _, k := range slices.Sorted(maps.Keys(o.m)) {
		if !slices.Contains(names, k) {
			hint := "Remove it. Accepted fields: " + strings.Join(names, ", ") + "."
			if len(names) == 0 {
				hint = "Remove it: this request takes no body fields besides idempotency_key."
			}
			o.v.add(o.prefix+k, "Unknown field "+o.prefix+k+".", hint)
		}
	}
}

// has reports whether member name is present (even as null).
func (o *object) has(name string) bool {
	_, ok := o.m[name]
	return ok
}

// raw returns member name as sent; ok is false if it is absent or null.
func (o *object) raw(name string) (json.RawMessage, bool) {
	v, ok := o.m[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// require records a problem if member name is absent or null.
func (o *object) require(name, hint string) bool {
	if _, ok := o.raw(name); !ok {
		o.fail(name, "is required.", hint)
		return false
	}
	return true
}

// str returns the string member name, checking it has at most maxLen
// characters and, for a single-line value, no control characters. ok is
// false when it is absent (not a problem) or wrong (a problem recorded).
func (o *object) str(name string, maxLen int, singleLine bool) (s string, ok bool) {
	v, present := o.m[name]
	if !present {
		return "", false
	}
	if json.Unmarshal(v, &s) != nil || string(v) == "null" {
		o.fail(name, "must be a string.", "Send a JSON string.")
		return "", false
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		o.fail(name, fmt.Sprintf("has %d characters; the most is %d.", n, maxLen), "Shorten it.")
		return "", false
	}
	if singleLine && strings.ContainsFunc(s, unicode.IsControl) {
		o.fail(name, "must be one line without control characters.", "Remove line breaks and tabs.")
		return "", false
	}
	return s, true
}

// integer returns the integer member name, checking lo <= n <= hi.
func (o *object) integer(name string, lo, hi int64) (n int64, ok bool) {
	v, present := o.m[name]
	if !present {
		return 0, false
	}
	if json.Unmarshal(v, &n) != nil || string(v) == "null" {
		o.fail(name, "must be an integer.", fmt.Sprintf("Send a whole number from %d to %d.", lo, hi))
		return 0, false
	}
	if n < lo || n > hi {
		o.fail(name, fmt.Sprintf("is %d; it must be from %d to %d.", n, lo, hi), fmt.Sprintf("Send a whole number from %d to %d.", lo, hi))
		return 0, false
	}
	return n, true
}

// nested returns member name as an object whose problems are named
// "<name>.<member>"; ok is false when it is absent or not an object.
func (o *object) nested(name string) (*object, bool) {
	v, present := o.m[name]
	if !present {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		o.fail(name, "must be an object.", "Send a JSON object.")
		return nil, false
	}
	return &object{m: m, prefix: o.prefix + name + ".", v: o.v}, true
}

// strings returns member name as a list of distinct strings, each checked
// by check (which returns a detail, or "" when the item is fine).
func (o *object) strings(name string, maxItems int, check func(string) string) ([]string, bool) {
	v, present := o.m[name]
	if !present {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || items == nil {
		o.fail(name, "must be an array of strings.", "Send a JSON array of strings ([] for none).")
		return nil, false
	}
	if len(items) > maxItems {
		o.fail(name, fmt.Sprintf("has %d items; the most is %d.", len(items), maxItems), "Send fewer items.")
		return nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for i, it := range items {
		param := fmt.Sprintf("%s[%d]", name, i)
		var s string
		if json.Unmarshal(it, &s) != nil || string(it) == "null" {
			o.fail(param, "must be a string.", "Send a JSON string.")
			good = false
			continue
		}
		if d := check(s); d != "" {
			o.fail(param, d, "Fix or remove this item.")
			good = false
			continue
		}
		if slices.Contains(out, s) {
			o.fail(param, fmt.Sprintf("repeats %q.", s), "List each value once.")
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// checkQuery refuses query parameters the route does not accept, and
// repeated ones, with 422 naming them.
func checkQuery(q url.Values, allowed []string) error {
	var v validation
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case !slices.Contains(allowed, k):
			hint := "This route takes no query parameters."
			if len(allowed) > 0 {
				hint = "Accepted query parameters: " + strings.Join(allowed, ", ") + "."
			}
			v.add(k, "Unknown query parameter "+k+".", hint)
		case len(q[k]) > 1:
			v.add(k, "Query parameter "+k+" is repeated.", "Give it once.")
		}
	}
	return v.err()
}

// page is a list request's page size and position.
type page struct {
	limit  int
	after  string // from the cursor: where the previous page ended; "" for the first page
	filter string // what the cursor is bound to
}

// parsePage reads limit and cursor. filter names the listing and its
// filters (the caller's organisation included); a cursor made for another
// filter is 400 invalid_cursor.
func (a *API) parsePage(q url.Values, filter string) (page, error) {
	p := page{limit: 20, filter: filter}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return page{}, paramProblem(http.StatusUnprocessableEntity, "validation_error", "limit",
				fmt.Sprintf("limit is %q; it must be a whole number from 1 to 100.", s), "Leave it out for 20 per page.")
		}
		p.limit = n
	}
	if cur := q.Get("cursor"); cur != "" || q.Has("cursor") {
		after, err := a.cursors.decode(cur, filter)
		if err != nil {
			return page{}, err
		}
		p.after = after
	}
	return p, nil
}

// list is the wire form of a page of results (docs/reference/rest.md#conventions).
type list[T any] struct {
	Data []T      `json:"data"`
	Meta listMeta `json:"meta"`
}

type listMeta struct {
	NextCursor *string `json:"next_cursor"`
	Limit      int     `json:"limit"`
}

// makeList renders items; when more is true, next_cursor continues after
// last.
func makeList[T any](a *API, p page, items []T, more bool, last string) list[T] {
	l := list[T]{Data: items, Meta: listMeta{Limit: p.limit}}
	if l.Data == nil {
		l.Data = []T{}
	}
	if more {
		cur := a.cursors.encode(last, p.filter)
		l.Meta.NextCursor = &cur
	}
	return l
}
