package bundleconf

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		l     Limits
		field string // "" for no problem
		msg   string
	}{
		{"zero takes the defaults", Limits{}, "", ""},
		{"defaults", Limits{}.WithDefaults(), "", ""},
		{"the largest memory", Limits{MemoryMiB: MaxMemoryMiB}, "", ""},
		{"memory over the cap", Limits{MemoryMiB: MaxMemoryMiB + 1}, "memory_mib", "more than a WebAssembly instance can address"},
		{"negative memory", Limits{MemoryMiB: -1}, "memory_mib", "-1 is negative"},
		{"negative timeout", Limits{Timeout: -time.Second}, "timeout", "-1s is negative"},
		{"output over the cap", Limits{MaxOutputBytes: MaxOutputBytes + 1}, "max_output_bytes", "more than"},
		{"negative pool", Limits{PoolSize: -1}, "pool_size", "negative"},
		{"negative api calls", Limits{APICalls: -2}, "api_calls", "-2 is negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.l.Check()
			if tt.field == "" {
				if len(got) != 0 {
					t.Fatalf("Check() = %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Field != tt.field || !strings.Contains(got[0].Msg, tt.msg) {
				t.Fatalf("Check() = %v, want one problem at %s saying %q", got, tt.field, tt.msg)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	want := Limits{MemoryMiB: 64, Timeout: 10 * time.Second, MaxOutputBytes: 1 << 20, PoolSize: 4, APICalls: 16}
	if got := (Limits{}).WithDefaults(); got != want {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	set := Limits{MemoryMiB: 8, Timeout: time.Second, MaxOutputBytes: 10, PoolSize: 1, APICalls: 1}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults() changed set fields: %+v", got)
	}
}

func TestNamesAndChecks(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"tasks": true, "a": true, "a_1": true, strings.Repeat("a", 32): true,
		"": false, "9tasks": false, "Tasks": false, "my-bundle": false, strings.Repeat("a", 33): false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", name, err, ok)
		}
	}
	for s, ok := range map[string]bool{
		strings.Repeat("0", 64): true, strings.Repeat("AB", 32): true,
		"": false, strings.Repeat("0", 63): false, strings.Repeat("zz", 32): false,
	} {
		if e := CheckSHA256(s); (e == nil) != ok {
			t.Errorf("CheckSHA256(%q) = %v, want ok %v", s, e, ok)
		}
	}
	for iso, ok := range map[string]bool{"": true, IsolationPerOrg: true, IsolationPerCall: true, "shared": false} {
		if e := CheckIsolation(iso); (e == nil) != ok {
			t.Errorf("CheckIsolation(%q) = %v, want ok %v", iso, e, ok)
		}
	}
}
