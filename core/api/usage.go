package api

// usageJSON is GET /usage: the organisation's plan, its limits and what
// has been used in the current UTC calendar month.
type usageJSON struct {
	Plan             string     `json:"plan"`
	Limits           limitsJSON `json:"limits"`
	CostCapCents     int64      `json:"cost_cap_cents"`
	MonthToDate      monthJSON  `json:"month_to_date"`
	Remaining        monthJSON  `json:"remaining"`
	ActiveExecutions int        `json:"active_executions"`
	Currency         string     `json:"currency"`
	PeriodStart      string     `json:"period_start"`
	ResetsAt         string     `json:"resets_at"`
}

type limitsJSON struct {
	ConcurrentExecutions     int   `json:"concurrent_executions"`
	ExecutionsPerMonth       int   `json:"executions_per_month"`
	CostCapCents             int64 `json:"cost_cap_cents"`
	MaxCostPerExecutionCents int64 `json:"max_cost_per_execution_cents"`
	MaxFileSizeBytes         int64 `json:"max_file_size_bytes"`
	RetentionSeconds         int64 `json:"retention_seconds"`
	Webhooks                 int   `json:"webhooks"`
	RequestsPerMinute        int   `json:"requests_per_minute"`
}

type monthJSON struct {
	CostCents  int64 `json:"cost_cents"`
	Executions int64 `json:"executions"`
}

func (a *API) getUsage(c *call) (*reply, error) {
	now := a.now()
	u, err := a.db.MonthUsage(c.ctx(), c.org.id, now)
	if err != nil {
		return nil, err
	}
	active, err := a.db.CountActive(c.ctx(), c.org.id)
	if err != nil {
		return nil, err
	}
	pl := c.org.plan
	return ok(usageJSON{
		Plan: c.org.planName,
		Limits: limitsJSON{
			ConcurrentExecutions:     pl.ConcurrentExecutions,
			ExecutionsPerMonth:       pl.ExecutionsPerMonth,
			CostCapCents:             pl.CostCapCents,
			MaxCostPerExecutionCents: pl.MaxCostPerExecutionCents,
			MaxFileSizeBytes:         pl.MaxFileSizeBytes,
			RetentionSeconds:         int64(pl.Retention.Seconds()),
			Webhooks:                 pl.Webhooks,
			RequestsPerMinute:        pl.RequestsPerMinute,
		},
		CostCapCents: pl.CostCapCents,
		MonthToDate:  monthJSON{CostCents: u.CostCents, Executions: u.Executions},
		Remaining: monthJSON{
			CostCents:  max(0, pl.CostCapCents-u.CostCents),
			Executions: max(0, int64(pl.ExecutionsPerMonth)-u.Executions),
		},
		ActiveExecutions: active,
		Currency:         "BRL",
		PeriodStart:      ts(u.Month),
		ResetsAt:         ts(monthEnd(now)),
	})
}
