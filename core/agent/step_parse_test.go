package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// countingFile is an input file that counts the bytes a step reads from it.
func countingFile(name string, data []byte, read *atomic.Int64) InputFile {
	f := memFileInput("file_1", name, "text/csv", data)
	f.Open = func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(&countingReader{r: bytes.NewReader(data), n: read}), nil
	}
	return f
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestParseStatementLimits runs parse_statement on hostile files through
// the built-in runner: each fails the execution with invalid_input and a
// message naming the file and the line, after reading only as far as that
// line from the blob store.
func TestParseStatementLimits(t *testing.T) {
	const header = "Data;Histórico;Valor\n"
	const row = "05/01/2026;PIX;1,00\n"
	rows := strings.Repeat(row, 300_000) // 6 MB the parser must not reach
	tests := []struct {
		name     string
		file     string
		data     string
		opts     *BuiltinOptions
		wantMsg  string
		wantRead int64 // at most
	}{
		{name: "fields", file: "bomb.csv", data: header + row + strings.Repeat(";", 300) + "\n" + rows,
			wantMsg: `step "ler": bomb.csv: line 3: 301 fields (limit 256)`, wantRead: 256 << 10},
		{name: "line length", file: "long.csv", data: header + strings.Repeat("x", 100<<10) + "\n" + rows,
			wantMsg: `step "ler": long.csv: line 2: 102400 bytes in one line (limit 65536)`, wantRead: 512 << 10},
		{name: "configured limits", file: "conf.csv", data: header + row + row + "05/01/2026;PIX;1,00;a;b;c\n" + rows,
			opts:    &BuiltinOptions{Parse: ParseLimits{MaxFields: 5}},
			wantMsg: `step "ler": conf.csv: line 4: 6 fields (limit 5)`, wantRead: 256 << 10},
		{name: "records", file: "blank.csv", data: header + strings.Repeat("\n", 100) + rows,
			opts:    &BuiltinOptions{Parse: ParseLimits{MaxRecords: 50}},
			wantMsg: `step "ler": blank.csv: line 51: 51 records (limit 50)`, wantRead: 256 << 10},
		{name: "transactions, all statements together", file: "many.csv", data: header + rows,
			opts:    &BuiltinOptions{MaxTransactions: 10},
			wantMsg: `step "ler": many.csv: line 12: more than 10 transactions`, wantRead: 256 << 10},
		{name: "OFX text", file: "big.ofx", data: "<OFX><STMTTRN><MEMO>" + strings.Repeat("A", 1<<20) + "</STMTTRN></OFX>",
			wantMsg: `step "ler": big.ofx: line 1: 1048576 bytes of text between two tags (limit 65536)`, wantRead: 2 << 20},
		{name: "file larger than a step reads", file: "huge.csv", data: header + rows,
			opts:    &BuiltinOptions{MaxInputBytes: 1 << 20},
			wantMsg: `step "ler": huge.csv: 6000022 bytes, more than the 1048576 a step reads`, wantRead: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var read atomic.Int64
			job := &Job{
				Playbook: json.RawMessage(`{"steps": [{"id": "ler", "type": "parse_statement", "params": {"source": {"file_index": 0}}}]}`),
				Files:    []InputFile{countingFile(tt.file, []byte(tt.data), &read)},
			}
			out, err := NewBuiltinRunner(tt.opts).Run(context.Background(), job, newMemSink())
			if err != nil {
				t.Fatalf("Run() error = %v", err)
			}
			if out.Status != StatusFailed || out.Failure == nil || out.Failure.Code != FailureInvalidInput || out.Failure.Message != tt.wantMsg {
				t.Fatalf("outcome = %s %+v; want %s %q", out.Status, out.Failure, FailureInvalidInput, tt.wantMsg)
			}
			if n := read.Load(); n > tt.wantRead {
				t.Errorf("read %d bytes of a %d-byte file, want at most %d: the parser should stop at the bad line", n, len(tt.data), tt.wantRead)
			}
		})
	}
}

func TestStream(t *testing.T) {
	opts := &BuiltinOptions{MaxInputBytes: 10}
	big := strings.Repeat("x", 11)
	tests := []struct {
		name    string
		job     *Job
		src     source
		want    string // what reading the stream gives
		wantErr string
		wantIE  bool // an *inputError, rather than an infrastructure error
	}{
		{name: "file at the limit", job: &Job{Files: []InputFile{memFileInput("f", "a.csv", "", []byte(big[:10]))}}, src: source{FileIndex: ptr(0)}, want: big[:10]},
		{name: "inline text", job: &Job{Input: json.RawMessage(`{"s": "ok"}`)}, src: source{Pointer: "/input/s"}, want: "ok"},
		{name: "inline JSON value", job: &Job{Input: json.RawMessage(`{"s": [1]}`)}, src: source{Pointer: "/input/s"}, wantErr: "not a JSON value", wantIE: true},
		{name: "declared size too large", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Size: 11}}}, src: source{FileIndex: ptr(0)}, wantErr: "11 bytes", wantIE: true},
		{name: "size lies", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Size: 1, Open: memFileInput("f", "a.csv", "", []byte(big)).Open}}}, src: source{FileIndex: ptr(0)}, wantErr: "a.csv: more than the 10 bytes", wantIE: true},
		{name: "read fails", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader("ab"), errReader{errors.New("blob store down")})), nil
		}}}}, src: source{FileIndex: ptr(0)}, wantErr: "reading input file f: blob store down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := &execution{job: tt.job, opts: opts, st: &state{}}
			_, rc, err := ex.stream(context.Background(), tt.src)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(rc)
				rc.Close()
			}
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("stream() read %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			var ie *inputError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &ie) != tt.wantIE {
				t.Fatalf("stream() error = %v (input error: %v), want %q (input error: %v)", err, errors.As(err, &ie), tt.wantErr, tt.wantIE)
			}
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
