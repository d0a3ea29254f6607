package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	ex := &execution{
		job: &Job{Input: json.RawMessage(`{"a": {"b/c": [10, {"d~e": "x"}]}, "n": null, "s": "text"}`)},
		st:  &state{Answers: map[string]json.RawMessage{"q": json.RawMessage(`{"answer": "hello"}`)}},
	}
	tests := []struct {
		ptr    string
		want   string
		wantOK bool
	}{
		{"/input", `{"a": {"b/c": [10, {"d~e": "x"}]}, "n": null, "s": "text"}`, true},
		{"/input/s", `"text"`, true},
		{"/input/a/b~1c/0", `10`, true},
		{"/input/a/b~1c/1/d~0e", `"x"`, true},
		{"/answers/q/answer", `"hello"`, true},
		{"/input/a/b~1c/2", "", false},
		{"/input/a/b~1c/01", "", false},
		{"/input/a/b~1c/-1", "", false},
		{"/input/s/x", "", false},
		{"/input/n", "", false},
		{"/input/missing", "", false},
		{"/answers/other/answer", "", false},
		{"/answers", "", false},
		{"/elsewhere", "", false},
	}
	for _, tt := range tests {
		got, ok := ex.lookup(tt.ptr)
		if ok != tt.wantOK || ok && string(got) != tt.want {
			t.Errorf("lookup(%q) = %s, %v; want %s, %v", tt.ptr, got, ok, tt.want, tt.wantOK)
		}
	}
	empty := &execution{job: &Job{}, st: &state{}}
	if _, ok := empty.lookup("/input/x"); ok {
		t.Error("lookup in an absent input found something")
	}
}

func TestLoadLimits(t *testing.T) {
	opts := &BuiltinOptions{MaxInputBytes: 10}
	big := strings.Repeat("x", 11)
	tests := []struct {
		name    string
		job     *Job
		src     source
		wantErr string
		wantIE  bool // an *inputError, rather than an infrastructure error
	}{
		{name: "inline text too large", job: &Job{Input: json.RawMessage(`{"s": "` + big + `"}`)}, src: source{Pointer: "/input/s"}, wantErr: "larger than 10", wantIE: true},
		{name: "declared size too large", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Size: 11}}}, src: source{FileIndex: ptr(0)}, wantErr: "11 bytes", wantIE: true},
		{name: "actual size too large", job: &Job{Files: []InputFile{memFileInput("f", "a.csv", "text/csv", []byte(big))}}, src: source{FileIndex: ptr(0)}, wantErr: "more than the 10", wantIE: true},
		{name: "size lies", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Size: 1, Open: memFileInput("f", "a.csv", "", []byte(big)).Open}}}, src: source{FileIndex: ptr(0)}, wantErr: "more than the 10 bytes", wantIE: true},
		{name: "no Open", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv"}}}, src: source{FileIndex: ptr(0)}, wantErr: "no Open"},
		{name: "Open fails", job: &Job{Files: []InputFile{{ID: "f", Filename: "a.csv", Open: func(context.Context) (io.ReadCloser, error) {
			return nil, errors.New("blob store down")
		}}}}, src: source{FileIndex: ptr(0)}, wantErr: "blob store down"},
		{name: "file id pointer not a string", job: &Job{Input: json.RawMessage(`{"f": 1}`)}, src: source{FileIDPointer: "/input/f"}, wantErr: "want a file id", wantIE: true},
		{name: "name match is case-insensitive", job: &Job{Files: []InputFile{memFileInput("f", "EXTRATO.CSV", "text/csv", []byte("ok"))}}, src: source{FileName: "extrato*.csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := &execution{job: tt.job, opts: opts, st: &state{}}
			got, err := ex.load(context.Background(), tt.src)
			if tt.wantErr == "" {
				if err != nil || string(got.data) != "ok" {
					t.Fatalf("load() = %+v, %v", got, err)
				}
				return
			}
			var ie *inputError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &ie) != tt.wantIE {
				t.Fatalf("load() error = %v (input error: %v), want %q (input error: %v)", err, errors.As(err, &ie), tt.wantErr, tt.wantIE)
			}
		})
	}
}
