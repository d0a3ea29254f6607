package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

const smallCSV = "Data;Histórico;Valor\n" +
	"02/03/2026;PIX RECEBIDO ACME;1.500,00\n" +
	"05/03/2026;TARIFA PACOTE;-45,90\n" +
	"20/03/2026;TED RECEBIDA BETA;800,00\n" +
	"02/04/2026;PIX RECEBIDO GAMA;100,00\n"

const smallReceivables = `[{"id":"F1","payer":"ACME","due_date":"2026-03-02","amount_cents":150000},` +
	`{"id":"F2","payer":"Beta","due_date":"2026-03-20","amount_cents":80000},` +
	`{"id":"F3","payer":"Delta","due_date":"2026-03-25","amount_cents":99900}]`

func smallInput(t *testing.T) json.RawMessage {
	t.Helper()
	in, err := json.Marshal(map[string]any{"statement": smallCSV, "receivables": json.RawMessage(smallReceivables)})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func run(t *testing.T, job *Job, sink Sink) *Outcome {
	t.Helper()
	out, err := NewBuiltinRunner(nil).Run(context.Background(), job, sink)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	return out
}

func TestBuiltinQuestionPauseAndResume(t *testing.T) {
	playbook := json.RawMessage(`{"steps": [
		{"id": "period", "type": "ask", "params": {"prompt": "Which period?", "answer_schema": {"type": "object",
			"properties": {"from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date"}},
			"required": ["from", "to"]}}},
		{"id": "statement", "type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}, "period": {"pointer": "/answers/period"}}},
		{"id": "summary", "type": "summarize"}
	]}`)
	sink := newMemSink()
	job := &Job{ExecutionID: "exe_q", Playbook: playbook, Input: smallInput(t)}

	first := run(t, job, sink)
	if first.Status != StatusWaitingInput || first.Pending == nil || first.Pending.Kind != PendingQuestion ||
		first.Pending.StepID != "period" || first.Pending.Prompt != "Which period?" || first.State == nil {
		t.Fatalf("first run = %+v, want waiting for the period question", first)
	}
	var schema answerSchema
	if err := json.Unmarshal(first.Pending.InputSchema, &schema); err != nil || schema.Properties["from"].Format != "date" {
		t.Fatalf("input_schema = %s (%v)", first.Pending.InputSchema, err)
	}
	if s := sink.steps["period"]; s.Status != StepWaitingInput {
		t.Errorf("ask step = %+v, want waiting_input", s)
	}
	if len(sink.chargesCopy()) != 0 {
		t.Errorf("charges before any work: %v", sink.chargesCopy())
	}

	// Running again without an answer reports the same pause.
	job.State = first.State
	again := run(t, job, sink)
	if again.Status != StatusWaitingInput || again.Pending.StepID != "period" {
		t.Fatalf("rerun without answer = %+v", again)
	}

	// An answer outside the schema keeps it waiting and says why.
	job.Resume = &Resume{StepID: "period", Answer: json.RawMessage(`{"from": "março", "to": "2026-03-31"}`)}
	bad := run(t, job, sink)
	if bad.Status != StatusWaitingInput || !strings.HasPrefix(bad.Pending.Prompt, "The previous answer was not accepted (from: want a date YYYY-MM-DD)") {
		t.Fatalf("bad answer = %+v", bad.Pending)
	}

	job.State = bad.State
	job.Resume = &Resume{StepID: "period", Answer: json.RawMessage(`{"from": "2026-03-01", "to": "2026-03-31"}`)}
	done := run(t, job, sink)
	if done.Status != StatusSucceeded {
		t.Fatalf("resumed run = %+v", done)
	}
	if s := sink.steps["period"]; s.Status != StepSucceeded || s.StartedAt.IsZero() || s.FinishedAt.IsZero() {
		t.Errorf("ask step after the answer = %+v", s)
	}
	var d outputData
	if err := json.Unmarshal(done.Output.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Statement.Transactions != 3 || d.Statement.Sources[0].OutsidePeriod != 1 {
		t.Errorf("period filter: %+v, want 3 kept and 1 outside", d.Statement.Sources)
	}
	if string(d.Answers["period"]) != `{"from":"2026-03-01","to":"2026-03-31"}` {
		t.Errorf("answers = %s", d.Answers["period"])
	}
	if want := []int64{5, 2}; !slices.Equal(sink.chargesCopy(), want) || done.CostCents != 7 {
		t.Errorf("charges = %v (total %d), want %v", sink.chargesCopy(), done.CostCents, want)
	}
	if !strings.HasPrefix(done.Output.Summary, "3 transactions from 2026-03-02 to 2026-03-20") {
		t.Errorf("summary = %q", done.Output.Summary)
	}
}

const approvalPlaybook = `{"steps": [
	{"id": "statement", "type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}},
	{"id": "recon", "type": "reconcile", "params": {"receivables": {"pointer": "/input/receivables"}}},
	{"id": "summary", "type": "summarize"},
	{"id": "confirm", "type": "approve", "params": {"prompt": "Write the reconciliation file?"}},
	{"id": "file", "type": "write_output", "params": {"content": "reconciliation", "format": "json"}}
]}`

func TestBuiltinApproval(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		wantStatus Status
		wantCode   string
		wantFiles  int
		wantCost   int64
	}{
		{name: "approved", answer: `{"approved": true}`, wantStatus: StatusSucceeded, wantFiles: 1, wantCost: 20},
		{name: "refused", answer: `{"approved": false, "comment": "numbers look wrong"}`, wantStatus: StatusFailed, wantCode: FailureNotApproved, wantCost: 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := newMemSink()
			job := &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t)}
			first := run(t, job, sink)
			if first.Status != StatusWaitingInput || first.Pending.Kind != PendingApproval || first.Pending.StepID != "confirm" {
				t.Fatalf("first run = %+v, want waiting for approval", first)
			}
			// The person approving sees the results so far.
			if !strings.Contains(first.Output.Summary, "Reconciliation: 2 of 3 receivables matched") || first.CostCents != 17 {
				t.Errorf("output while waiting = %q, cost %d", first.Output.Summary, first.CostCents)
			}
			job.State, job.Resume = first.State, &Resume{StepID: "confirm", Answer: json.RawMessage(tt.answer)}
			out := run(t, job, sink)
			if out.Status != tt.wantStatus || len(out.Output.FileIDs) != tt.wantFiles || out.CostCents != tt.wantCost {
				t.Fatalf("resumed = %s, files %v, cost %d; want %s, %d files, cost %d", out.Status, out.Output.FileIDs, out.CostCents, tt.wantStatus, tt.wantFiles, tt.wantCost)
			}
			if tt.wantCode != "" {
				if out.Failure == nil || out.Failure.Code != tt.wantCode || !strings.Contains(out.Failure.Message, "numbers look wrong") {
					t.Errorf("failure = %+v, want %s with the comment", out.Failure, tt.wantCode)
				}
				if out.Output.Summary == "" || sink.steps["confirm"].Status != StepFailed {
					t.Errorf("refusal lost the output or the step: %q, %+v", out.Output.Summary, sink.steps["confirm"])
				}
				if _, wrote := sink.fileNamed("reconciliation.json"); wrote {
					t.Error("a refused approval still wrote the file")
				}
			}
		})
	}
}

func TestBuiltinBadResume(t *testing.T) {
	first := run(t, &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t)}, newMemSink())
	tests := []struct {
		name string
		job  *Job
	}{
		{name: "answer to another step", job: &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t), State: first.State,
			Resume: &Resume{StepID: "summary", Answer: json.RawMessage(`{"approved": true}`)}}},
		{name: "resume without state", job: &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t),
			Resume: &Resume{StepID: "confirm", Answer: json.RawMessage(`{"approved": true}`)}}},
		{name: "playbook edited since the pause", job: &Job{Playbook: json.RawMessage(strings.Replace(approvalPlaybook, "Write the", "Write this", 1)),
			Input: smallInput(t), State: first.State, Resume: &Resume{StepID: "confirm", Answer: json.RawMessage(`{"approved": true}`)}}},
		{name: "garbage state", job: &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t), State: json.RawMessage(`{"v": "x"}`),
			Resume: &Resume{StepID: "confirm", Answer: json.RawMessage(`{"approved": true}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewBuiltinRunner(nil).Run(context.Background(), tt.job, newMemSink())
			if !errors.Is(err, ErrBadResume) {
				t.Fatalf("Run() error = %v, want ErrBadResume", err)
			}
		})
	}
}

func TestBuiltinCostCap(t *testing.T) {
	playbook := json.RawMessage(`{"steps": [
		{"id": "statement", "type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}},
		{"id": "categories", "type": "categorize"},
		{"id": "recon", "type": "reconcile", "params": {"receivables": {"pointer": "/input/receivables"}}},
		{"id": "file", "type": "write_output", "params": {"content": "transactions"}},
		{"id": "summary", "type": "summarize"}
	]}`)
	tests := []struct {
		name        string
		orgCap      int64 // the Sink's monthly cap
		maxCost     int64 // Job.MaxCostCents
		wantCharges []int64
		wantLast    string // last completed step
	}{
		{name: "organisation cap crossed by reconcile", orgCap: 10, wantCharges: []int64{5, 2, 10}, wantLast: "recon"},
		{name: "execution max stops before reconcile", maxCost: 16, wantCharges: []int64{5, 2}, wantLast: "categories"},
		{name: "execution max allows exactly the playbook", maxCost: 22, wantCharges: []int64{5, 2, 10, 3, 2}, wantLast: "summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := newMemSink()
			sink.capCents = tt.orgCap
			out := run(t, &Job{Playbook: playbook, Input: smallInput(t), MaxCostCents: tt.maxCost}, sink)
			if !slices.Equal(sink.chargesCopy(), tt.wantCharges) {
				t.Errorf("charges = %v, want %v", sink.chargesCopy(), tt.wantCharges)
			}
			var d outputData
			if err := json.Unmarshal(out.Output.Data, &d); err != nil {
				t.Fatal(err)
			}
			if last := d.StepsCompleted[len(d.StepsCompleted)-1]; last != tt.wantLast {
				t.Errorf("last completed step = %s, want %s", last, tt.wantLast)
			}
			if tt.wantLast == "summary" {
				if out.Status != StatusSucceeded {
					t.Errorf("status = %s, failure %+v", out.Status, out.Failure)
				}
				return
			}
			if out.Status != StatusFailed || out.Failure.Code != FailureCostCap {
				t.Fatalf("outcome = %s %+v, want failed cost_cap_exceeded", out.Status, out.Failure)
			}
			// Partial output is kept.
			if d.Statement == nil || d.Statement.Transactions != 4 {
				t.Errorf("partial output lost: %s", out.Output.Data)
			}
			if tt.wantLast == "recon" && d.Reconciliation == nil {
				t.Errorf("reconciliation done before the cap is not in the output: %s", out.Output.Data)
			}
			if out.CostCents != sum(tt.wantCharges) {
				t.Errorf("CostCents = %d, want %d", out.CostCents, sum(tt.wantCharges))
			}
		})
	}
}

func sum(s []int64) (n int64) {
	for _, v := range s {
		n += v
	}
	return n
}

// slowStatement is an endless CSV statement delivered one row per read, the
// way a slow object store would.
type slowStatement struct{ n int }

func (s *slowStatement) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	s.n++
	if s.n == 1 {
		return copy(p, "Data;Histórico;Valor\n"), nil
	}
	return copy(p, "02/03/2026;PIX RECEBIDO;10,00\n"), nil
}

func (s *slowStatement) Close() error { return nil }

func TestBuiltinCancellation(t *testing.T) {
	job := &Job{
		Playbook: json.RawMessage(`{"steps": [{"id": "statement", "type": "parse_statement", "params": {"source": {"file_index": 0}}}]}`),
		Files: []InputFile{{ID: "file_slow", Filename: "extrato.csv", Open: func(context.Context) (io.ReadCloser, error) {
			return &slowStatement{}, nil
		}}},
	}
	sink := newMemSink()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	out, err := NewBuiltinRunner(nil).Run(ctx, job, sink)
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("Run() = %+v, %v; want context.Canceled", out, err)
	}
	if elapsed > time.Second {
		t.Errorf("Run() took %v after cancellation, want under a second", elapsed)
	}
	if s := sink.steps["statement"]; s.Status != StepCancelled {
		t.Errorf("step = %+v, want cancelled", s)
	}
	if len(sink.chargesCopy()) != 0 {
		t.Errorf("a cancelled step was charged: %v", sink.chargesCopy())
	}

	// Already cancelled: nothing happens.
	sink = newMemSink()
	if _, err := NewBuiltinRunner(nil).Run(ctx, job, sink); !errors.Is(err, context.Canceled) || len(sink.events) != 0 {
		t.Fatalf("Run(cancelled ctx) = %v with %d steps", err, len(sink.events))
	}
}

func TestBuiltinFailures(t *testing.T) {
	tests := []struct {
		name     string
		playbook string
		input    string
		files    []InputFile
		wantCode string
		wantMsg  string
		wantCost int64 // charged for the steps before the failing one
	}{
		{name: "invalid playbook", playbook: `{"steps": [{"type": "teleport"}]}`, wantCode: FailureInvalidPlaybook, wantMsg: `steps[0].type: unknown step type "teleport"`},
		{name: "missing input", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}}]}`, input: `{}`, wantCode: FailureInvalidInput, wantMsg: "nothing at /input/statement"},
		{name: "input not text", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}}]}`, input: `{"statement": 5}`, wantCode: FailureInvalidInput, wantMsg: "want a string"},
		{name: "malformed CSV", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}}]}`,
			input: `{"statement": "Data;Descrição;Valor\n05/03/2026;A;1,00\n06/03/2026;B;1,2,3\n"}`, wantCode: FailureInvalidInput, wantMsg: "/input/statement: line 3: column 3"},
		{name: "malformed OFX", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}]}`,
			files: []InputFile{memFileInput("file_1", "x.ofx", "application/x-ofx", []byte("<OFX>\n<STMTTRN>\n<TRNAMT>1\n</STMTTRN>\n</OFX>"))}, wantCode: FailureInvalidInput, wantMsg: "x.ofx: line 2: transaction without DTPOSTED"},
		{name: "no such file", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_name": "*.ofx"}}}]}`, wantCode: FailureInvalidInput, wantMsg: `no input file named like "*.ofx"`},
		{name: "file index out of range", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 2}}}]}`, wantCode: FailureInvalidInput, wantMsg: "no input file #2"},
		{name: "file id not an input", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_id_pointer": "/input/f"}}}]}`, input: `{"f": "file_other"}`, wantCode: FailureInvalidInput, wantMsg: `"file_other" is not an input file`},
		{name: "bad receivables", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}}, {"type": "reconcile", "params": {"receivables": {"pointer": "/input/receivables"}}}]}`,
			input: `{"statement": "Data;Descrição;Valor\n05/03/2026;A;1,00\n", "receivables": [{"id": "A", "due_date": "2026-02-30", "amount": 1}]}`, wantCode: FailureInvalidInput, wantMsg: "receivables[0].due_date", wantCost: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := newMemSink()
			out := run(t, &Job{Playbook: json.RawMessage(tt.playbook), Input: json.RawMessage(tt.input), Files: tt.files}, sink)
			if out.Status != StatusFailed || out.Failure == nil || out.Failure.Code != tt.wantCode || !strings.Contains(out.Failure.Message, tt.wantMsg) {
				t.Fatalf("outcome = %s %+v; want %s containing %q", out.Status, out.Failure, tt.wantCode, tt.wantMsg)
			}
			if got := sum(sink.chargesCopy()); got != tt.wantCost || out.CostCents != tt.wantCost {
				t.Errorf("charged %d (outcome %d), want %d: the failing step is not charged", got, out.CostCents, tt.wantCost)
			}
			if tt.wantCode == FailureInvalidInput {
				if s := sink.events[len(sink.events)-1]; s.Status != StepFailed {
					t.Errorf("last step = %+v, want failed", s)
				}
			} else if len(sink.events) != 0 {
				t.Errorf("an invalid playbook recorded steps: %+v", sink.events)
			}
		})
	}
}

func TestBuiltinSinkErrorsAbort(t *testing.T) {
	boom := errors.New("database is down")
	sink := newMemSink()
	sink.failStep = boom
	_, err := NewBuiltinRunner(nil).Run(context.Background(), &Job{Playbook: json.RawMessage(approvalPlaybook), Input: smallInput(t)}, sink)
	if !errors.Is(err, boom) {
		t.Fatalf("Run() error = %v, want the sink's error", err)
	}
}

func TestBuiltinOutputFormats(t *testing.T) {
	playbook := json.RawMessage(`{"steps": [
		{"id": "statement", "type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}},
		{"id": "categories", "type": "categorize", "params": {"rules": [{"category": "cliente_acme", "keywords": ["ACME"], "direction": "credit"}]}},
		{"id": "recon", "type": "reconcile", "params": {"receivables": {"pointer": "/input/receivables"}}},
		{"type": "summarize"},
		{"type": "write_output", "params": {"content": "transactions", "separator": ";"}},
		{"type": "write_output", "params": {"content": "unmatched_receivables"}},
		{"type": "write_output", "params": {"content": "unexpected_credits", "format": "json"}},
		{"type": "write_output", "params": {"content": "summary"}},
		{"type": "write_output", "params": {"content": "all", "format": "json", "filename": "tudo.json"}}
	]}`)
	in := strings.Replace(string(smallInput(t)), "TARIFA PACOTE", "=HYPERLINK(1)", 1)
	sink := newMemSink()
	out := run(t, &Job{Playbook: playbook, Input: json.RawMessage(in)}, sink)
	if out.Status != StatusSucceeded || len(out.Output.FileIDs) != 5 {
		t.Fatalf("outcome = %+v", out)
	}
	tests := []struct{ file, want string }{
		{"transactions.csv", "id;date;description;amount_cents;category;type;source;line\n"},
		{"transactions.csv", "statement:2;2026-03-02;PIX RECEBIDO ACME;150000;cliente_acme;;statement;2\n"},
		{"transactions.csv", ";'=HYPERLINK(1);-4590;outros;"},
		{"unmatched_receivables.csv", "receivable_id,payer,due_date,amount_cents\nF3,Delta,2026-03-25,99900\n"},
		{"unexpected_credits.json", `"amount_cents": 10000`},
		{"summary.csv", "TOTAL,4,240000,4590,235410\n"},
		{"tudo.json", `"transactions": [`},
	}
	for _, tt := range tests {
		data, ok := sink.fileNamed(tt.file)
		if !ok || !strings.Contains(string(data), tt.want) {
			t.Errorf("%s = %q, want it to contain %q", tt.file, data, tt.want)
		}
	}
}

// TestHammerBuiltinConcurrentExecutions runs one BuiltinRunner for many
// executions at once; with -race it checks that runs share nothing.
func TestHammerBuiltinConcurrentExecutions(t *testing.T) {
	r := NewBuiltinRunner(nil)
	b := generateBankData(t)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			job := &Job{
				Playbook: json.RawMessage(reconciliationPlaybook),
				Input:    json.RawMessage(`{"receivables_file_id": "file_rec"}`),
				Files: []InputFile{
					memFileInput("file_csv", "extrato.csv", "text/csv", b.csv),
					memFileInput("file_ofx", "extrato.ofx", "application/x-ofx", b.ofx),
					memFileInput("file_rec", "recebiveis.csv", "text/csv", b.receivablesCSV),
				},
			}
			out, err := r.Run(context.Background(), job, newMemSink())
			switch {
			case err != nil:
				errs <- err
			case out.Status != StatusSucceeded || out.CostCents != 30:
				errs <- errors.New("unexpected outcome " + string(out.Status))
			default:
				errs <- nil
			}
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestBuiltinLargeStateIsPacked pauses after a few hundred transactions: the
// state is compressed and resumes as well as a small one.
func TestBuiltinLargeStateIsPacked(t *testing.T) {
	b := generateBankData(t)
	playbook := strings.Replace(reconciliationPlaybook, `{"id": "summary", "type"`,
		`{"id": "ok", "type": "approve", "params": {"prompt": "Continue?"}}, {"id": "summary", "type"`, 1)
	job := &Job{
		Playbook: json.RawMessage(playbook),
		Input:    json.RawMessage(`{"receivables_file_id": "file_rec"}`),
		Files: []InputFile{
			memFileInput("file_csv", "extrato.csv", "text/csv", b.csv),
			memFileInput("file_ofx", "extrato.ofx", "application/x-ofx", b.ofx),
			memFileInput("file_rec", "recebiveis.csv", "text/csv", b.receivablesCSV),
		},
	}
	sink := newMemSink()
	first := run(t, job, sink)
	if first.Status != StatusWaitingInput || !strings.Contains(string(first.State), `"gzip"`) || len(first.State) > 20_000 {
		t.Fatalf("paused with a %d-byte state %.60s…, want it packed", len(first.State), first.State)
	}
	job.State, job.Resume = first.State, &Resume{StepID: "ok", Answer: json.RawMessage(`{"approved": true}`)}
	done := run(t, job, sink)
	if done.Status != StatusSucceeded || done.CostCents != 30 || !strings.Contains(done.Output.Summary, "320 lançamentos") {
		t.Fatalf("resumed = %s, cost %d, %q", done.Status, done.CostCents, done.Output.Summary)
	}
}
