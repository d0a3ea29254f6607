package agent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// BuiltinOptions tune a BuiltinRunner. The zero value gives the defaults.
type BuiltinOptions struct {
	// MaxInputBytes is the largest input file or inline text a step reads.
	// Default 20 MiB.
	MaxInputBytes int64
	// MaxTransactions is the most transactions an execution may hold, all
	// statements together. Default 200,000.
	MaxTransactions int
	// Parse bounds what a parse_statement step reads from one file.
	Parse ParseLimits
	// Now returns the time steps are stamped with. Default time.Now.
	Now func() time.Time
}

// ParseLimits bound what a parse_statement step reads from one statement
// file, so that a hostile file costs a bounded amount of memory and time.
// Statements are parsed in one pass as they are read from the blob store;
// the first line past a limit fails the execution with FailureInvalidInput
// and a message naming the line, the count and the limit:
// "extrato.csv: line 2: 300 fields (limit 256)". A zero field takes its
// default. See PLAYBOOKS.md (parse_statement).
type ParseLimits struct {
	// MaxLineBytes is the longest CSV line (a quoted field spanning lines
	// counts with its record) or OFX text between two tags, in bytes of
	// decoded UTF-8. Default 64 KiB. A CSV parse allocates a buffer this
	// large, so raise it with care.
	MaxLineBytes int
	// MaxFields is the most fields in a CSV record and the most elements in
	// an OFX <STMTTRN>. Default 256.
	MaxFields int
	// MaxRecords is the most CSV records (lines), blank ones included.
	// Default 2,000,000.
	MaxRecords int
	// MaxDecodedBytes is the most text a file may decode to (Windows-1252
	// grows up to 3× in UTF-8). Default 64 MiB.
	MaxDecodedBytes int64
}

// BuiltinRunner is the built-in playbook engine (runner: builtin). It runs
// the task's playbook step by step, charging each step's fixed cost after
// the step ends, pausing at ask and approve steps and resuming after them.
// Everything it needs between runs is in Outcome.State.
//
// A BuiltinRunner holds no per-execution state and is safe for concurrent
// use; it has nothing to close. Create it with NewBuiltinRunner.
type BuiltinRunner struct {
	opts BuiltinOptions // fixed at creation
}

var _ Runner = (*BuiltinRunner)(nil)

// NewBuiltinRunner returns a runner with opts (nil: defaults).
func NewBuiltinRunner(opts *BuiltinOptions) *BuiltinRunner {
	r := &BuiltinRunner{}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.MaxInputBytes <= 0 {
		r.opts.MaxInputBytes = 20 << 20
	}
	if r.opts.MaxTransactions <= 0 {
		r.opts.MaxTransactions = 200_000
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	return r
}

// Run implements Runner. An invalid playbook fails the execution with
// FailureInvalidPlaybook before anything is charged. With Job.Resume it
// applies the answer to the paused step and continues after it; without it,
// a paused execution reports the same pause again. A Resume that does not
// match Job.State is an error wrapping ErrBadResume.
func (r *BuiltinRunner) Run(ctx context.Context, job *Job, sink Sink) (*Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pb, err := parsePlaybook(job.Playbook)
	if err != nil {
		var prior int64
		if st, err := decodeState(job.State); err == nil {
			prior = st.CostCents
		}
		return &Outcome{
			Status:    StatusFailed,
			Output:    Output{FileIDs: []string{}},
			Failure:   &Failure{Code: FailureInvalidPlaybook, Message: err.Error()},
			CostCents: prior,
		}, nil
	}
	st, err := loadState(job, pb)
	if err != nil {
		return nil, err
	}
	ex := &execution{job: job, sink: sink, opts: &r.opts, pb: pb, st: st}

	if st.Paused != "" {
		if job.Resume == nil {
			return ex.pause(ex.pb.steps[st.Next], ""), nil
		}
		out, err := ex.resume(ctx, job.Resume)
		if out != nil || err != nil {
			return out, err
		}
	} else if job.Resume != nil {
		return nil, fmt.Errorf("%w: the execution is not waiting for input", ErrBadResume)
	}

	for st.Next < len(pb.steps) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := pb.steps[st.Next]
		ex.step = s
		if limit := job.MaxCostCents; limit > 0 && st.CostCents+s.def.cost > limit {
			return ex.fail(FailureCostCap, fmt.Sprintf("step %q costs %d centavos: the execution's cost would reach %d, above its max of %d",
				s.ID, s.def.cost, st.CostCents+s.def.cost, limit)), nil
		}
		started := r.opts.Now()
		if p, ok := s.action.(pauser); ok {
			st.Paused, st.PausedAt = s.ID, started
			if err := sink.RecordStep(ctx, ex.record(s, StepWaitingInput, started, time.Time{}, p.pending(ex, s).Prompt)); err != nil {
				return nil, fmt.Errorf("recording step %q: %w", s.ID, err)
			}
			return ex.pause(s, ""), nil
		}
		if err := sink.RecordStep(ctx, ex.record(s, StepRunning, started, time.Time{}, "")); err != nil {
			return nil, fmt.Errorf("recording step %q: %w", s.ID, err)
		}
		summary, err := s.action.run(ctx, ex)
		if err != nil {
			var ie *inputError
			if errors.As(err, &ie) {
				if rerr := sink.RecordStep(ctx, ex.record(s, StepFailed, started, r.opts.Now(), ie.msg)); rerr != nil {
					return nil, fmt.Errorf("recording step %q: %w", s.ID, rerr)
				}
				return ex.fail(FailureInvalidInput, fmt.Sprintf("step %q: %s", s.ID, ie.msg)), nil
			}
			if ctx.Err() != nil {
				ex.recordCancelled(ctx, s, started)
				return nil, fmt.Errorf("step %q: %w", s.ID, ctx.Err())
			}
			return nil, fmt.Errorf("step %q: %w", s.ID, err)
		}
		if out, err := ex.finish(ctx, s, started, summary); out != nil || err != nil {
			return out, err
		}
	}
	return &Outcome{Status: StatusSucceeded, Output: ex.output(), CostCents: st.CostCents}, nil
}

// finish records step s as succeeded, moves past it and charges its cost.
// It returns a non-nil Outcome when the cost cap stops the run.
func (ex *execution) finish(ctx context.Context, s *step, started time.Time, summary string) (*Outcome, error) {
	st := ex.st
	st.Next++
	st.Completed = append(st.Completed, s.ID)
	if err := ex.sink.RecordStep(ctx, ex.record(s, StepSucceeded, started, ex.opts.Now(), summary)); err != nil {
		return nil, fmt.Errorf("recording step %q: %w", s.ID, err)
	}
	if s.def.cost == 0 {
		return nil, nil
	}
	st.CostCents += s.def.cost // Charge records the amount even when it reports the cap
	if err := ex.sink.Charge(ctx, s.def.cost); err != nil {
		if errors.Is(err, ErrCostCap) {
			return ex.fail(FailureCostCap, fmt.Sprintf("cost cap reached after step %q: %v", s.ID, err)), nil
		}
		return nil, fmt.Errorf("charging step %q: %w", s.ID, err)
	}
	return nil, nil
}

// resume applies the answer to the paused step. It returns a non-nil
// Outcome when the run ends there (a refusal, or an unusable answer asked
// again), nil to continue with the next step.
func (ex *execution) resume(ctx context.Context, res *Resume) (*Outcome, error) {
	st := ex.st
	s := ex.pb.steps[st.Next]
	if res.StepID != st.Paused || s.ID != st.Paused {
		return nil, fmt.Errorf("%w: answer for step %q, but step %q is waiting", ErrBadResume, res.StepID, st.Paused)
	}
	ex.step = s
	p, ok := s.action.(pauser)
	if !ok {
		return nil, fmt.Errorf("%w: step %q does not wait for input", ErrBadResume, s.ID)
	}
	summary, reprompt, failure := p.answer(ex, s, res.Answer)
	if reprompt != "" {
		return ex.pause(s, reprompt), nil
	}
	started := st.PausedAt
	st.Paused, st.PausedAt = "", time.Time{}
	if failure != nil {
		if err := ex.sink.RecordStep(ctx, ex.record(s, StepFailed, started, ex.opts.Now(), summary)); err != nil {
			return nil, fmt.Errorf("recording step %q: %w", s.ID, err)
		}
		return ex.fail(failure.Code, failure.Message), nil
	}
	return ex.finish(ctx, s, started, summary)
}

// pause reports the execution waiting at step s; reprompt, when set, says
// why the previous answer was refused.
func (ex *execution) pause(s *step, reprompt string) *Outcome {
	p := s.action.(pauser).pending(ex, s)
	if reprompt != "" {
		p.Prompt = "The previous answer was not accepted (" + reprompt + "). " + p.Prompt
	}
	state, err := encodeState(ex.st)
	if err != nil {
		state = nil // cannot happen: plain structs and an in-memory buffer
	}
	return &Outcome{Status: StatusWaitingInput, Output: ex.output(), Pending: p, State: state, CostCents: ex.st.CostCents}
}

func (ex *execution) fail(code, msg string) *Outcome {
	return &Outcome{Status: StatusFailed, Output: ex.output(), Failure: &Failure{Code: code, Message: msg}, CostCents: ex.st.CostCents}
}

func (ex *execution) record(s *step, status StepStatus, started, finished time.Time, summary string) Step {
	st := Step{ID: s.ID, Type: s.Type, Title: s.Title, Status: status, Summary: summary, StartedAt: started, FinishedAt: finished}
	if status == StepSucceeded {
		st.CostCents = s.def.cost
	}
	return st
}

// recordCancelled marks a step cancelled, best effort, on a context that
// outlives the cancelled one by at most a second.
func (ex *execution) recordCancelled(ctx context.Context, s *step, started time.Time) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = ex.sink.RecordStep(cctx, ex.record(s, StepCancelled, started, ex.opts.Now(), "cancelled"))
}
