package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// source says where a step reads a file from: exactly one member is set.
// Pointers are RFC 6901 JSON pointers into the document
// {"input": <the execution's input>, "answers": {<ask step id>: <answer>}}.
type source struct {
	Pointer       string `json:"pointer,omitempty"`         // the text itself, e.g. "/input/statement_csv"
	FileIndex     *int   `json:"file_index,omitempty"`      // 0-based index into the execution's input files
	FileName      string `json:"file_name,omitempty"`       // glob on the input file's name, case-insensitive ("*.ofx")
	FileIDPointer string `json:"file_id_pointer,omitempty"` // pointer to a string holding an input file id
}

func (s *source) validate(v *validation, at string) {
	n := 0
	if s.Pointer != "" {
		n++
		validatePointer(v, at+".pointer", s.Pointer)
	}
	if s.FileIndex != nil {
		n++
		if *s.FileIndex < 0 || *s.FileIndex > 999 {
			v.addf(at+".file_index", "want 0 to 999, got %d", *s.FileIndex)
		}
	}
	if s.FileName != "" {
		n++
		if _, err := path.Match(s.FileName, ""); err != nil || strings.Contains(s.FileName, "/") {
			v.addf(at+".file_name", "not a valid file name pattern: %q", s.FileName)
		}
	}
	if s.FileIDPointer != "" {
		n++
		validatePointer(v, at+".file_id_pointer", s.FileIDPointer)
	}
	if n != 1 {
		v.addf(at, "set exactly one of pointer, file_index, file_name, file_id_pointer")
	}
}

// validatePointer checks pointer syntax and that it reads the input or the
// answer of an earlier ask step.
func validatePointer(v *validation, at, ptr string) {
	toks, err := splitPointer(ptr)
	if err != nil {
		v.addf(at, "%v", err)
		return
	}
	switch {
	case len(toks) >= 1 && toks[0] == "input":
	case len(toks) >= 2 && toks[0] == "answers":
		if v.types[toks[1]] != "ask" {
			v.addf(at, "%q is not the id of an earlier ask step", toks[1])
		}
	default:
		v.addf(at, `want a pointer starting with "/input" or "/answers/<ask step id>", got %q`, ptr)
	}
}

// splitPointer splits an RFC 6901 pointer into unescaped tokens.
func splitPointer(ptr string) ([]string, error) {
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("a JSON pointer starts with \"/\", got %q", ptr)
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("bad escape in JSON pointer %q (use ~0 for ~ and ~1 for /)", ptr)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// lookup resolves a validated pointer; ok is false when nothing is there.
func (ex *execution) lookup(ptr string) (json.RawMessage, bool) {
	toks, err := splitPointer(ptr)
	if err != nil || len(toks) == 0 {
		return nil, false
	}
	var cur json.RawMessage
	switch toks[0] {
	case "input":
		cur, toks = ex.job.Input, toks[1:]
		if len(bytes.TrimSpace(cur)) == 0 {
			cur = json.RawMessage("{}")
		}
	case "answers":
		if len(toks) < 2 {
			return nil, false
		}
		var ok bool
		if cur, ok = ex.st.Answers[toks[1]]; !ok {
			return nil, false
		}
		toks = toks[2:]
	default:
		return nil, false
	}
	for _, t := range toks {
		cur = bytes.TrimSpace(cur)
		switch {
		case len(cur) > 0 && cur[0] == '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(cur, &m) != nil {
				return nil, false
			}
			next, ok := m[t]
			if !ok {
				return nil, false
			}
			cur = next
		case len(cur) > 0 && cur[0] == '[':
			var a []json.RawMessage
			if json.Unmarshal(cur, &a) != nil {
				return nil, false
			}
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(a) || (len(t) > 1 && t[0] == '0') {
				return nil, false
			}
			cur = a[i]
		default:
			return nil, false
		}
	}
	if bytes.Equal(bytes.TrimSpace(cur), []byte("null")) {
		return nil, false
	}
	return cur, true
}

// loaded is what a source yielded: either the bytes of a file or text, or,
// for a pointer to a non-string JSON value, the value itself.
type loaded struct {
	name string // file name, or the pointer
	data []byte
	json json.RawMessage // set instead of data for a pointer to an array or object
}

// load reads a source. Missing or oversized input is an *inputError.
func (ex *execution) load(ctx context.Context, s source) (*loaded, error) {
	switch {
	case s.Pointer != "":
		raw, ok := ex.lookup(s.Pointer)
		if !ok {
			return nil, inputErrorf("nothing at %s", s.Pointer)
		}
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			if c := bytes.TrimSpace(raw); len(c) > 0 && (c[0] == '[' || c[0] == '{') {
				return &loaded{name: s.Pointer, json: raw}, nil
			}
			return nil, inputErrorf("%s: want a string with the file's text", s.Pointer)
		}
		if int64(len(text)) > ex.opts.MaxInputBytes {
			return nil, inputErrorf("%s: larger than %d bytes", s.Pointer, ex.opts.MaxInputBytes)
		}
		return &loaded{name: s.Pointer, data: []byte(text)}, nil
	}
	f, err := ex.sourceFile(s)
	if err != nil {
		return nil, err
	}
	return ex.readFile(ctx, f)
}

// sourceFile finds the input file a file source names.
func (ex *execution) sourceFile(s source) (InputFile, error) {
	switch {
	case s.FileIndex != nil:
		if *s.FileIndex >= len(ex.job.Files) {
			return InputFile{}, inputErrorf("no input file #%d (the execution has %d)", *s.FileIndex, len(ex.job.Files))
		}
		return ex.job.Files[*s.FileIndex], nil
	case s.FileName != "":
		pattern := strings.ToLower(s.FileName)
		for _, f := range ex.job.Files {
			if ok, _ := path.Match(pattern, strings.ToLower(f.Filename)); ok {
				return f, nil
			}
		}
		return InputFile{}, inputErrorf("no input file named like %q", s.FileName)
	case s.FileIDPointer != "":
		raw, ok := ex.lookup(s.FileIDPointer)
		var id string
		if !ok || json.Unmarshal(raw, &id) != nil || id == "" {
			return InputFile{}, inputErrorf("%s: want a file id", s.FileIDPointer)
		}
		for _, f := range ex.job.Files {
			if f.ID == id {
				return f, nil
			}
		}
		return InputFile{}, inputErrorf("%s: %q is not an input file of this execution", s.FileIDPointer, id)
	}
	return InputFile{}, errors.New("empty source") // validation prevents it
}

// stream opens a source for one pass: a file is read from the blob store
// as the caller reads, never held whole, and fails with an *inputError past
// MaxInputBytes; inline text is read from the execution's input. A pointer
// to a non-string JSON value is an *inputError. The caller closes the
// reader.
func (ex *execution) stream(ctx context.Context, s source) (name string, rc io.ReadCloser, err error) {
	if s.Pointer != "" {
		src, err := ex.load(ctx, s)
		if err != nil {
			return "", nil, err
		}
		if src.data == nil {
			return "", nil, inputErrorf("%s: want a string with the statement's text, not a JSON value", src.name)
		}
		return src.name, io.NopCloser(bytes.NewReader(src.data)), nil
	}
	f, err := ex.sourceFile(s)
	if err != nil {
		return "", nil, err
	}
	if f.Size > ex.opts.MaxInputBytes {
		return "", nil, inputErrorf("%s: %d bytes, more than the %d a step reads", f.Filename, f.Size, ex.opts.MaxInputBytes)
	}
	if f.Open == nil {
		return "", nil, fmt.Errorf("input file %s: no Open function", f.ID)
	}
	body, err := f.Open(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("opening input file %s: %w", f.ID, err)
	}
	r := &cappedReader{r: ctxReader{ctx, body}, f: f, max: ex.opts.MaxInputBytes}
	return f.Filename, struct {
		io.Reader
		io.Closer
	}{r, body}, nil
}

// cappedReader reads an input file, failing with an *inputError once it
// has read more than max bytes, and wrapping read errors with the file.
type cappedReader struct {
	r    io.Reader
	f    InputFile
	max  int64
	read int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.read > c.max {
		return 0, inputErrorf("%s: more than the %d bytes a step reads", c.f.Filename, c.max)
	}
	if room := c.max - c.read + 1; int64(len(p)) > room {
		p = p[:room] // one byte past max tells an oversized file
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	if c.read > c.max {
		return n - 1, inputErrorf("%s: more than the %d bytes a step reads", c.f.Filename, c.max)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("reading input file %s: %w", c.f.ID, err)
	}
	return n, err
}
func (ex *execution) readFile(ctx context.Context, f InputFile) (*loaded, error) {
	if f.Size > ex.opts.MaxInputBytes {
		return nil, inputErrorf("%s: %d bytes, more than the %d a step reads", f.Filename, f.Size, ex.opts.MaxInputBytes)
	}
	if f.Open == nil {
		return nil, fmt.Errorf("input file %s: no Open function", f.ID)
	}
	rc, err := f.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening input file %s: %w", f.ID, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, rc}, ex.opts.MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading input file %s: %w", f.ID, err)
	}
	if int64(len(data)) > ex.opts.MaxInputBytes {
		return nil, inputErrorf("%s: more than the %d bytes a step reads", f.Filename, ex.opts.MaxInputBytes)
	}
	return &loaded{name: f.Filename, data: data}, nil
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// inputError is a problem with the execution's input (files, inline text,
// answers): the execution fails with FailureInvalidInput and this message.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func inputErrorf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}
