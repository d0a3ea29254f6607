package mcp

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the response sections of testdata/wire/*.txtar")

// goldenHeaders are the response headers recorded in golden files.
var goldenHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Allow", "Cache-Control",
	"Content-Type", "Mcp-Protocol-Version", "Retry-After", "Www-Authenticate",
}

// TestWireGolden replays testdata/wire/*.txtar: each file holds a request
// (method line, headers, blank line, body) and the exact response (status
// line, the headers above that were set, blank line, body). Run with
// -update to rewrite the responses after an intended change, then read the
// diff.
func TestWireGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	e := newTestEngine(t, nil)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var reqText []byte
			respIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "request":
					reqText = f.Data
				case "response":
					respIdx = i
				}
			}
			r := parseGoldenRequest(t, reqText)
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			got := formatGoldenResponse(w)
			if *update {
				if respIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "response"})
					respIdx = len(ar.Files) - 1
				}
				ar.Files[respIdx].Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if respIdx < 0 {
				t.Fatal("no response section; run with -update")
			}
			if want := ar.Files[respIdx].Data; !bytes.Equal(got, want) {
				t.Errorf("response differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

func parseGoldenRequest(t *testing.T, text []byte) *http.Request {
	t.Helper()
	head, body, _ := bytes.Cut(text, []byte("\n\n"))
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Scan()
	method, chunked := sc.Text(), false
	if m, ok := strings.CutSuffix(method, " chunked"); ok {
		method, chunked = m, true
	}
	body = bytes.TrimSuffix(body, []byte("\n"))
	if n, ok := bytes.CutPrefix(body, []byte("<repeat ")); ok {
		// "<repeat N>" makes an N-byte body, for the size limit.
		count, err := strconv.Atoi(strings.TrimSuffix(string(n), ">"))
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.Repeat([]byte("x"), count)
	}
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length: ContentLength stays -1
	}
	r := httptest.NewRequest(method, "http://127.0.0.1:8080/mcp", rd)
	if chunked {
		r.ContentLength = -1
	}
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return r
}

func formatGoldenResponse(w *httptest.ResponseRecorder) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n", w.Code)
	keys := make([]string, 0, len(goldenHeaders))
	for _, k := range goldenHeaders {
		if _, ok := w.Header()[http.CanonicalHeaderKey(k)]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(w.Header().Values(k), ", "))
	}
	b.WriteString("\n")
	b.Write(w.Body.Bytes())
	if w.Body.Len() == 0 || w.Body.Bytes()[w.Body.Len()-1] != '\n' {
		b.WriteString("\n")
	}
	return b.Bytes()
}
