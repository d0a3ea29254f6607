package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// Keyset pagination limits.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// ListParams selects one page of a list, newest first.
type ListParams struct {
	// Limit is the page size; 0 means DefaultListLimit, larger than
	// MaxListLimit means MaxListLimit.
	Limit int

	// Before is the id of the last item of the previous page ("" for the
	// first page); the page holds items with smaller ids. Rows created after
	// the first page was read never appear in a later page, so paging does
	// not repeat or skip items while others insert.
	Before string
}

func clampLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	default:
		return n
	}
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T  // never nil
	More  bool // a next page exists: ask again with Before = the last item's id
}

// args collects bind arguments and hands out their placeholders ($1, $2…),
// for queries whose WHERE clause depends on the filters.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// where joins conditions with AND.
func where(conds []string) string {
	return " WHERE " + strings.Join(conds, " AND ")
}

// likeContains returns a LIKE pattern (with ESCAPE '\') matching text that
// contains s, lowered: the stored search_text is lowered the same way.
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// sqlStrings renders constants the store owns (statuses) as a SQL list.
// Never pass it user input.
func sqlStrings[S ~string](values []S) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('\'')
		b.WriteString(string(v))
		b.WriteByte('\'')
	}
	b.WriteByte(')')
	return b.String()
}

// oneRow turns an UPDATE or DELETE that matched no row into ErrNotFound.
func oneRow(res sql.Result, err error, kind, id string) error {
	if err != nil {
		return fmt.Errorf("writing %s %s: %w", kind, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("writing %s %s: %w", kind, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %s: %w", kind, id, ErrNotFound)
	}
	return nil
}

// listPage runs a list query that asks for limit+1 rows and turns the extra
// row into Page.More.
func listPage[T any](ctx context.Context, q querier, query string, a args, limit int, scan func(scanner) (T, error)) (Page[T], error) {
	rows, err := q.QueryContext(ctx, query, a...)
	if err != nil {
		return Page[T]{}, fmt.Errorf("listing: %w", err)
	}
	defer rows.Close()
	page := Page[T]{Items: make([]T, 0, limit)}
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return Page[T]{}, fmt.Errorf("listing: %w", err)
		}
		if len(page.Items) == limit {
			page.More = true
			break
		}
		page.Items = append(page.Items, item)
	}
	if err := rows.Err(); err != nil {
		return Page[T]{}, fmt.Errorf("listing: %w", err)
	}
	return page, nil
}
