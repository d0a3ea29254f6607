package store

import (
	"testing"
	"time"
)

func TestTimeRoundTrip(t *testing.T) {
	in := time.Date(2026, 11, 30, 23, 59, 58, 123456789, time.FixedZone("BRT", -3*3600))
	want := in.UTC().Truncate(time.Microsecond)
	sqlite := dialect{name: DriverSQLite}.timeArg(in)
	if sqlite != "2026-12-01T02:59:58.123456Z" {
		t.Errorf("SQLite timeArg = %v", sqlite)
	}
	pg := dialect{name: DriverPostgres}.timeArg(in)
	for _, src := range []any{sqlite, []byte(sqlite.(string)), pg} {
		var got time.Time
		if err := (timeCol{&got}).Scan(src); err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("Scan(%#v) = %v, %v; want %v UTC", src, got, err, want)
		}
	}
	var p *time.Time = &want
	if err := (nullTimeCol{&p}).Scan(nil); err != nil || p != nil {
		t.Errorf("Scan(NULL) = %v, %v", p, err)
	}
	var got time.Time
	if err := (timeCol{&got}).Scan(nil); err == nil {
		t.Errorf("NULL into a NOT NULL time: no error")
	}
	if err := (timeCol{&got}).Scan("yesterday"); err == nil {
		t.Errorf("bad text: no error")
	}
}

func TestLikeContains(t *testing.T) {
	tests := map[string]string{
		"Ação":    "%ação%",
		"100%":    `%100\%%`,
		"a_b":     `%a\_b%`,
		`back\sl`: `%back\\sl%`,
	}
	for in, want := range tests {
		if got := likeContains(in); got != want {
			t.Errorf("likeContains(%q) = %q, want %q", in, got, want)
		}
	}
}
