package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// How Go values map to columns, identically on both back-ends: times through
// dialect.timeArg and timeCol, JSON as text through jsonArg/rawJSONArg and
// the json*Col scanners, nullable text through nullStringCol.

// scanner is *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// timeCol scans a NOT NULL timestamp: time.Time from pgx, text from SQLite.
type timeCol struct{ p *time.Time }

func (c timeCol) Scan(src any) error {
	t, err := parseTime(src)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("store: NULL in a NOT NULL timestamp column")
	}
	*c.p = *t
	return nil
}

// nullTimeCol scans a nullable timestamp; NULL is nil.
type nullTimeCol struct{ p **time.Time }

func (c nullTimeCol) Scan(src any) error {
	t, err := parseTime(src)
	if err != nil {
		return err
	}
	*c.p = t
	return nil
}

func parseTime(src any) (*time.Time, error) {
	var t time.Time
	switch v := src.(type) {
	case nil:
		return nil, nil
	case time.Time:
		t = v
	case string:
		p, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("store: timestamp %q: %w", v, err)
		}
		t = p
	case []byte:
		p, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return nil, fmt.Errorf("store: timestamp %q: %w", v, err)
		}
		t = p
	default:
		return nil, fmt.Errorf("store: cannot scan %T into a timestamp", src)
	}
	t = t.UTC()
	return &t, nil
}

// nullStringCol scans nullable text; NULL is "".
type nullStringCol struct{ p *string }

func (c nullStringCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = ""
	case string:
		*c.p = v
	case []byte:
		*c.p = string(v)
	default:
		return fmt.Errorf("store: cannot scan %T into text", src)
	}
	return nil
}

// nullStringArg binds "" as NULL.
func nullStringArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// rawJSONCol scans a JSON column into a json.RawMessage, keeping the stored
// text; NULL is nil.
type rawJSONCol struct{ p *json.RawMessage }

func (c rawJSONCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = nil
	case string:
		*c.p = json.RawMessage(v)
	case []byte:
		*c.p = bytes.Clone(v)
	default:
		return fmt.Errorf("store: cannot scan %T into JSON", src)
	}
	return nil
}

// jsonCol scans a JSON column into a T; NULL leaves the zero T.
type jsonCol[T any] struct{ p *T }

func (c jsonCol[T]) Scan(src any) error {
	var raw json.RawMessage
	if err := (rawJSONCol{&raw}).Scan(src); err != nil {
		return err
	}
	var v T
	if raw != nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("store: decoding %T: %w", v, err)
		}
	}
	*c.p = v
	return nil
}

// nullJSONCol scans a nullable JSON column into a *T; NULL is nil.
type nullJSONCol[T any] struct{ p **T }

func (c nullJSONCol[T]) Scan(src any) error {
	var raw json.RawMessage
	if err := (rawJSONCol{&raw}).Scan(src); err != nil {
		return err
	}
	if raw == nil || string(raw) == "null" {
		*c.p = nil
		return nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("store: decoding %T: %w", *v, err)
	}
	*c.p = v
	return nil
}

// rawJSONArg binds raw JSON as text; nil is NULL. Text that is not JSON is
// refused here, because SQLite would store it.
func rawJSONArg(field string, raw json.RawMessage) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("store: %s is not valid JSON", field)
	}
	return string(raw), nil
}

// jsonArg binds v marshalled to JSON text. A nil pointer is NULL.
func jsonArg[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("store: encoding %T: %w", *v, err)
	}
	return string(b), nil
}

// mustJSON marshals values the store builds itself (slices of strings and
// plain structs), which cannot fail.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encoding %T: %v", v, err))
	}
	return string(b)
}
