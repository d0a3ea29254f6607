package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kobana/kadu/core/agent/internal/reconcile"
	"github.com/kobana/kadu/core/agent/internal/statement"
)

const stateVersion = 1

// state is what the built-in runner keeps between runs of one execution
// (Outcome.State ↔ Job.State) and what its steps read and write.
type state struct {
	V              int                        `json:"v"`
	Playbook       string                     `json:"playbook_sha256"`
	Next           int                        `json:"next"`                // index of the next step to run
	Paused         string                     `json:"paused,omitempty"`    // id of the step waiting for an answer
	PausedAt       time.Time                  `json:"paused_at,omitzero"`  // when it started waiting
	CostCents      int64                      `json:"cost_cents"`          // charged so far, every run included
	Completed      []string                   `json:"completed,omitempty"` // ids of finished steps
	Transactions   []txn                      `json:"transactions,omitempty"`
	Sources        []sourceReport             `json:"sources,omitempty"`
	Categorized    bool                       `json:"categorized,omitempty"`
	Reconciliation *reconcile.Result          `json:"reconciliation,omitempty"`
	Summary        *summary                   `json:"summary,omitempty"`
	Answers        map[string]json.RawMessage `json:"answers,omitempty"`
	Files          []outputFile               `json:"files,omitempty"`
}

// txn is a statement transaction as the playbook sees it.
type txn struct {
	statement.Transaction
	Source   string `json:"source"` // id of the parse_statement step that read it
	Category string `json:"category,omitempty"`
}

// sourceReport describes what one parse_statement step read.
type sourceReport struct {
	Step          string `json:"step"`
	Name          string `json:"name"` // file name or pointer
	Format        string `json:"format"`
	Account       string `json:"account,omitempty"`
	Transactions  int    `json:"transactions"`
	Skipped       int    `json:"skipped_rows"`
	OutsidePeriod int    `json:"outside_period,omitempty"`
}

// outputFile is a file written by write_output.
type outputFile struct {
	Step        string `json:"step"`
	FileID      string `json:"file_id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Bytes       int    `json:"bytes"`
}

// execution is one Run of the built-in runner: not shared between
// goroutines, dropped when Run returns.
type execution struct {
	job  *Job
	sink Sink
	opts *BuiltinOptions
	pb   *playbook
	st   *state
	step *step // the step being run
}

// packedState is how a large state travels: gzip-compressed JSON, base64
// in a JSON string, so that Outcome.State stays JSON.
type packedState struct {
	V    int    `json:"v"`
	Gzip []byte `json:"gzip"`
}

// packThreshold is the size above which a state is compressed; a pause
// after a few hundred transactions is already ~70 KB of JSON, which
// compresses about tenfold.
const packThreshold = 32 << 10

func encodeState(st *state) (json.RawMessage, error) {
	raw, err := json.Marshal(st)
	if err != nil || len(raw) <= packThreshold {
		return raw, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return json.Marshal(packedState{V: stateVersion, Gzip: buf.Bytes()})
}

// maxUnpackedState bounds a decompressed state.
const maxUnpackedState = 512 << 20

func decodeState(raw json.RawMessage) (*state, error) {
	var packed packedState
	if err := json.Unmarshal(raw, &packed); err == nil && packed.Gzip != nil {
		zr, err := gzip.NewReader(bytes.NewReader(packed.Gzip))
		if err != nil {
			return nil, err
		}
		if raw, err = io.ReadAll(io.LimitReader(zr, maxUnpackedState)); err != nil {
			return nil, err
		}
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func loadState(job *Job, pb *playbook) (*state, error) {
	if len(job.State) == 0 {
		if job.Resume != nil {
			return nil, fmt.Errorf("%w: Job.Resume without Job.State", ErrBadResume)
		}
		return &state{V: stateVersion, Playbook: pb.digest}, nil
	}
	stp, err := decodeState(job.State)
	if err != nil {
		return nil, fmt.Errorf("%w: unreadable state: %v", ErrBadResume, err)
	}
	st := *stp
	switch {
	case st.V != stateVersion:
		return nil, fmt.Errorf("%w: state version %d, want %d", ErrBadResume, st.V, stateVersion)
	case st.Playbook != pb.digest:
		return nil, fmt.Errorf("%w: the playbook changed since the execution paused", ErrBadResume)
	case st.Next < 0 || st.Next > len(pb.steps):
		return nil, fmt.Errorf("%w: state points at step %d of %d", ErrBadResume, st.Next, len(pb.steps))
	}
	return &st, nil
}

// outputData is Output.Data of the built-in runner. Lists are capped; the
// full results go to output files.
type outputData struct {
	StepsCompleted []string                   `json:"steps_completed"`
	Statement      *statementData             `json:"statement,omitempty"`
	Reconciliation *reconciliationData        `json:"reconciliation,omitempty"`
	Summary        *summary                   `json:"summary,omitempty"`
	Answers        map[string]json.RawMessage `json:"answers,omitempty"`
	Files          []outputFile               `json:"files,omitempty"`
}

type statementData struct {
	Transactions int            `json:"transactions"`
	Sources      []sourceReport `json:"sources"`
}

type reconciliationData struct {
	Counts               reconcile.Counts       `json:"counts"`
	Totals               reconcile.Totals       `json:"totals"`
	UnmatchedReceivables []reconcile.Receivable `json:"unmatched_receivables"`
	UnexpectedCredits    []reconcile.Credit     `json:"unexpected_credits"`
	Truncated            bool                   `json:"truncated,omitempty"` // lists cut at maxListed
}

// maxListed caps the lists in Output.Data.
const maxListed = 100

func (ex *execution) output() Output {
	st := ex.st
	d := outputData{StepsCompleted: st.Completed, Summary: st.Summary, Answers: st.Answers, Files: st.Files}
	if d.StepsCompleted == nil {
		d.StepsCompleted = []string{}
	}
	if len(st.Sources) > 0 {
		d.Statement = &statementData{Transactions: len(st.Transactions), Sources: st.Sources}
	}
	if r := st.Reconciliation; r != nil {
		rd := &reconciliationData{Counts: r.Counts, Totals: r.Totals, UnmatchedReceivables: r.UnmatchedReceivables, UnexpectedCredits: r.UnexpectedCredits}
		if len(rd.UnmatchedReceivables) > maxListed {
			rd.UnmatchedReceivables, rd.Truncated = rd.UnmatchedReceivables[:maxListed], true
		}
		if len(rd.UnexpectedCredits) > maxListed {
			rd.UnexpectedCredits, rd.Truncated = rd.UnexpectedCredits[:maxListed], true
		}
		d.Reconciliation = rd
	}
	data, err := json.Marshal(d)
	if err != nil {
		data = nil // cannot happen: plain structs
	}
	out := Output{Data: data, FileIDs: []string{}}
	for _, f := range st.Files {
		out.FileIDs = append(out.FileIDs, f.FileID)
	}
	if st.Summary != nil {
		out.Summary = st.Summary.Text
	} else {
		out.Summary = ex.plainSummary()
	}
	return out
}

// plainSummary describes the results when no summarize step ran.
func (ex *execution) plainSummary() string {
	st := ex.st
	var parts []string
	if len(st.Sources) > 0 {
		parts = append(parts, fmt.Sprintf("%d transactions read", len(st.Transactions)))
	}
	if r := st.Reconciliation; r != nil {
		parts = append(parts, fmt.Sprintf("%d of %d receivables matched", r.Counts.Matched, r.Counts.Receivables))
	}
	if len(st.Files) > 0 {
		parts = append(parts, fmt.Sprintf("%d files written", len(st.Files)))
	}
	parts = append(parts, fmt.Sprintf("%d of %d steps completed", len(st.Completed), len(ex.pb.steps)))
	return strings.Join(parts, "; ") + "."
}
