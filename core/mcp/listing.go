package mcp

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/auth"
)

// Cursors of catalog listings are opaque to clients. They hold the method
// and an offset; a cursor from another listing or a forged one is refused.
// They need no signature: any offset only pages through entries the caller
// may already see.

func encodeCursor(method string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + method + "|" + strconv.Itoa(offset)))
}

func decodeCursor(method, cursor string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != 3 || parts[0] != "v1" || parts[1] != method {
		return 0, false
	}
	off, err := strconv.Atoi(parts[2])
	if err != nil || off < 0 {
		return 0, false
	}
	return off, true
}

// page cuts one page out of items, starting at cursor.
func page[T any](x *exchange, size int, items []T) ([]T, string, *Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(x, &p); err != nil {
		return nil, "", err
	}
	off := 0
	if p.Cursor != nil {
		var ok bool
		if off, ok = decodeCursor(x.msg.method, *p.Cursor); !ok || off > len(items) {
			return nil, "", InvalidParams("Invalid params: invalid cursor; start the listing again without one")
		}
	}
	end := min(off+size, len(items))
	next := ""
	if end < len(items) {
		next = encodeCursor(x.msg.method, end)
	}
	return items[off:end], next, nil
}

// listing answers the list methods: the catalog's entries the caller's role
// and scopes allow (rung 9 checks the cursor), one page of them, then the
// organisation's rate limit (rung 10).
func listing[T any](e *Engine, x *exchange, fetch func(context.Context, *auth.Principal) ([]T, error), access func(T) Access) ([]T, string, *Error) {
	all, err := fetch(x.r.Context(), x.principal)
	if err != nil {
		return nil, "", e.internal(x, err)
	}
	visible := make([]T, 0, len(all))
	for _, v := range all {
		if a := access(v); x.principal.Allows(a.MinRole, a.Scope) {
			visible = append(visible, v)
		}
	}
	items, next, perr := page(x, e.pageSize, visible)
	if perr != nil {
		return nil, "", perr
	}
	if !e.rungOrgLimit(x) {
		return nil, "", errAnswered
	}
	return items, next, nil
}
