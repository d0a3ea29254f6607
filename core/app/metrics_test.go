package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
)

type refusingLimiter struct{}

func (refusingLimiter) AllowIP(context.Context, string) (bool, time.Duration) {
	return false, time.Second
}
func (refusingLimiter) AllowOrg(context.Context, string) (bool, time.Duration) {
	return false, time.Second
}

type refusingVerifier struct{ err error }

func (v refusingVerifier) Verify(context.Context, string) (*auth.Principal, error) { return nil, v.err }

// TestCountedRefusals: the limiter REST and MCP share counts its refusals
// by bucket kind, and the verifier its refusals by reason, whatever the
// caller (an IP or an organisation id never becomes a label).
func TestCountedRefusals(t *testing.T) {
	reg, m, err := newMetrics()
	if err != nil {
		t.Fatal(err)
	}
	l := countingLimiter{refusingLimiter{}, m}
	l.AllowIP(t.Context(), "203.0.113.7")
	l.AllowOrg(t.Context(), "org_secret")
	l.AllowOrg(t.Context(), "org_secret")
	v := countingVerifier{refusingVerifier{fmt.Errorf("fetching keys: %w", auth.ErrKeysUnavailable)}, m}
	if _, err := v.Verify(t.Context(), "token"); err == nil {
		t.Fatal("the counting verifier accepted what its verifier refused")
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				got[f.GetName()+" "+l.GetValue()] = s.GetCounter().GetValue()
			}
		}
	}
	for k, want := range map[string]float64{
		"kadu_rate_limit_refusals_total ip": 1, "kadu_rate_limit_refusals_total org": 2,
		"kadu_auth_failures_total issuer_unavailable": 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}
