package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// sink records what a runner reports for one execution: steps in the
// store, costs against the execution's and the organisation's caps, and
// output files. One sink serves one run, from the runner's goroutine; the
// worker closes it when the run ends, so that a runner it stopped waiting
// for (runBounded) records nothing more.
type sink struct {
	q     *Queue
	exe   store.Execution
	task  store.Task
	steps map[string]string // runner step id → store step id
	ready bool              // steps of earlier runs loaded
	cap   *int64            // the organisation's monthly cap, loaded at the first charge

	mu     sync.Mutex // guards files and closed: close and partialOutput run on the worker's goroutine
	files  []string   // output file ids written in this run
	closed bool
}

// errSinkClosed answers a runner that reports after its run ended.
var errSinkClosed = errors.New("the run has ended: nothing more is recorded")

// close refuses every later report.
func (s *sink) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *sink) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// addFile notes an output file written in this run.
func (s *sink) addFile(id string) {
	s.mu.Lock()
	s.files = append(s.files, id)
	s.mu.Unlock()
}

func newSink(q *Queue, exe store.Execution, task store.Task) *sink {
	return &sink{q: q, exe: exe, task: task, steps: map[string]string{}}
}

var _ agent.Sink = (*sink)(nil)

// stepData is what the store keeps of a runner step beyond its columns.
type stepData struct {
	RunnerStepID string `json:"runner_step_id"`
	Title        string `json:"title,omitempty"`
}

func (s *sink) RecordStep(ctx context.Context, step agent.Step) error {
	if s.isClosed() {
		return errSinkClosed
	}
	st, org := s.q.opts.Store, s.exe.OrgID
	if !s.ready {
		// A resumed execution reports its paused step again: find the
		// steps of earlier runs by the runner's ids.
		for after := 0; ; {
			page, err := st.ListSteps(ctx, org, s.exe.ID, store.StepListParams{Limit: 100, After: after})
			if err != nil {
				return fmt.Errorf("loading steps: %w", err)
			}
			for _, p := range page.Items {
				var d stepData
				if json.Unmarshal(p.Data, &d) == nil && d.RunnerStepID != "" {
					s.steps[d.RunnerStepID] = p.ID
				}
				after = p.Position
			}
			if !page.More {
				break
			}
		}
		s.ready = true
	}
	if id, ok := s.steps[step.ID]; ok {
		_, err := st.UpdateStep(ctx, org, id, func(p *store.Step) {
			p.Status, p.Summary, p.CostCents = string(step.Status), step.Summary, step.CostCents
			if !step.FinishedAt.IsZero() {
				t := step.FinishedAt.UTC()
				p.FinishedAt = &t
			}
		})
		return err
	}
	data, _ := json.Marshal(stepData{RunnerStepID: step.ID, Title: step.Title})
	p := store.Step{
		ExecutionID: s.exe.ID, Name: firstNonEmpty(step.Title, step.ID), Kind: step.Type, Status: string(step.Status),
		Summary: step.Summary, CostCents: step.CostCents, StartedAt: step.StartedAt.UTC(), Data: data,
	}
	if !step.FinishedAt.IsZero() {
		t := step.FinishedAt.UTC()
		p.FinishedAt = &t
	}
	created, err := st.AppendStep(ctx, org, p)
	if err != nil {
		return err
	}
	s.steps[step.ID] = created.ID
	return nil
}

// Charge adds the cost, then checks the execution's max cost and the
// organisation's monthly cap (docs/reference/rest.md#conventions): crossing either ends the run with
// cost_cap_exceeded, partial output kept.
func (s *sink) Charge(ctx context.Context, cents int64) error {
	if s.isClosed() {
		return errSinkClosed
	}
	st, org := s.q.opts.Store, s.exe.OrgID
	total, err := st.AddCost(ctx, org, s.exe.ID, cents)
	if err != nil {
		return err
	}
	if max := s.exe.Cost.MaxCostCents; max > 0 && total > max {
		return fmt.Errorf("%w: the execution cost %d centavos, over its maximum of %d", agent.ErrCostCap, total, max)
	}
	if s.cap == nil { // a run's plan does not change under it: read it once
		plan, err := s.q.plan(ctx, org)
		if err != nil {
			return err
		}
		s.cap = &plan.CostCapCents
	}
	usage, err := st.MonthUsage(ctx, org, s.q.opts.Now())
	if err != nil {
		return err
	}
	if usage.CostCents > *s.cap {
		return fmt.Errorf("%w: the organisation spent %d centavos this month, over its cap of %d", agent.ErrCostCap, usage.CostCents, *s.cap)
	}
	return nil
}

// WriteFile stores an output file as a blob with its files row (files.go),
// or, without Blobs, under OutputDir with no row.
func (s *sink) WriteFile(ctx context.Context, name, contentType string, data []byte) (string, error) {
	if s.isClosed() {
		return "", errSinkClosed
	}
	if s.q.opts.OutputDir == "" && s.q.opts.Blobs == nil {
		return "", fmt.Errorf("output files are not configured on this replica")
	}
	base := filepath.Base(filepath.Clean("/" + name))
	if base == "/" || base == "." || strings.HasPrefix(base, ".") {
		return "", fmt.Errorf("output file name %q is not usable", name)
	}
	if s.q.opts.Blobs != nil {
		return s.writeBlob(ctx, base, contentType, data)
	}
	id := store.NewID(store.PrefixFile)
	dir := filepath.Join(s.q.opts.OutputDir, s.exe.OrgID, s.exe.ID, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("writing output file: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, base), data, 0o600); err != nil {
		return "", fmt.Errorf("writing output file: %w", err)
	}
	s.addFile(id)
	return id, nil
}

// partialOutput is what a cancelled run leaves: the files it wrote.
func (s *sink) partialOutput() *store.Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		return s.exe.Output
	}
	return &store.Output{Summary: "Cancelled.", FileIDs: slices.Clone(s.files)}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
