package main

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestUnknownPlanKeepsCostCap provisions an organisation on a plan, then
// restarts the real `kadu serve` with that plan removed from the
// configuration: the organisation is held to orgs.default_plan, and an
// execution that spends past that plan's monthly cap fails with
// cost_cap_exceeded instead of running without a cap.
func TestUnknownPlanKeepsCostCap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts servers")
	}
	bin := buildKadu(t)
	agent, agentURL := newSlowAgent(t)
	agent.setFast()
	agent.doneCents = 50
	addr := freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: warn\n"+noBundles)
	env := crashEnv(t, agentURL, addr)
	args := []string{"serve", "--config", cfgFile, "--addr", addr, "--admin-addr", freeAddr(t)}

	// On gold, the organisation's task may cost up to 1000 per execution.
	gold := slices.Concat(env, []string{"KADU_ORGS__DEFAULT_PLAN=gold",
		"KADU_PLANS__GOLD__CONCURRENT_EXECUTIONS=2", "KADU_PLANS__GOLD__EXECUTIONS_PER_MONTH=100",
		"KADU_PLANS__GOLD__MAX_FILE_SIZE_BYTES=1048576", "KADU_PLANS__GOLD__RETENTION=720h",
		"KADU_PLANS__GOLD__REQUESTS_PER_MINUTE=600", "KADU_PLANS__GOLD__COST_CAP_CENTS=100000",
		"KADU_PLANS__GOLD__MAX_COST_PER_EXECUTION_CENTS=1000"})
	first := serveProcess(t, bin, gold, "", args...)
	c := apiClient{t: t, base: "http://" + addr, token: mintToken(t, bin, cfgFile, addr, gold, "org_gold")}
	if status, body := c.do(http.MethodGet, "/usage", ""); status != http.StatusOK || body["plan"] != "gold" {
		t.Fatalf("usage on gold: %d %v", status, body)
	}
	task := c.taskID()
	kill(t, first)

	// gold is gone; the default plan caps the month at 6 centavos.
	serveProcess(t, bin, slices.Concat(env, []string{"KADU_PLANS__DEVELOPER__COST_CAP_CENTS=6",
		"KADU_PLANS__DEVELOPER__MAX_COST_PER_EXECUTION_CENTS=6"}), "", args...)
	if status, body := c.do(http.MethodGet, "/usage", ""); status != http.StatusOK || body["plan"] != "developer" {
		t.Fatalf("usage with gold removed: %d %v, want the default plan", status, body)
	}
	exe := c.launch(task) // may cost 6 by the plan's maximum: within the cap
	e := c.wait(exe, "failed", 60*time.Second, func(e execution) bool { return e.Status != "queued" && e.Status != "running" })
	if e.Status != "failed" || e.Code != "cost_cap_exceeded" || e.Cents != 50 {
		t.Errorf("execution spending 50 past the default plan's cap of 6 ended %+v; want failed with cost_cap_exceeded", e)
	}
}
