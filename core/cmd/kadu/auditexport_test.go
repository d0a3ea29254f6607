package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{in: "", want: time.Time{}},
		{in: "720h", want: now.Add(-720 * time.Hour)},
		{in: " 90m ", want: now.Add(-90 * time.Minute)},
		{in: "2026-01-02T15:04:05Z", want: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)},
		{in: "2026-01-02T15:04:05.5-03:00", want: time.Date(2026, 1, 2, 18, 4, 5, 5e8, time.UTC)},
		{in: "-720h", wantErr: true},
		{in: "0s", wantErr: true},
		{in: "30d", wantErr: true},
		{in: "2026-01-02", wantErr: true},
		{in: "yesterday", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		switch {
		case tt.wantErr && (err == nil || !strings.Contains(err.Error(), "--since")):
			t.Errorf("parseSince(%q) = %v, %v; want an error naming --since", tt.in, got, err)
		case !tt.wantErr && (err != nil || !got.Equal(tt.want)):
			t.Errorf("parseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParseSince: any input is either refused with an error naming the
// flag, or a time not after now.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"", "720h", "2026-01-02T15:04:05Z", "-1h", "1e9h", "9999-12-31T23:59:59Z"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err != nil {
			if !strings.Contains(err.Error(), "--since") {
				t.Fatalf("error %q does not name --since", err)
			}
			return
		}
		if _, derr := time.ParseDuration(strings.TrimSpace(s)); derr == nil && got.After(now) {
			t.Fatalf("duration %q gave %v, after now", s, got)
		}
	})
}
