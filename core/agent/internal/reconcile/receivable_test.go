package reconcile

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/agent/internal/statement"
)

func TestParseReceivables(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // "id|payer|due|cents"
		wantErr string
	}{
		{
			name: "JSON array with amount forms",
			in:   `[{"id":"F1","payer":"ACME","due_date":"2026-03-10","amount_cents":150000},{"id":2,"payer":"Beta","due_date":"10/03/2026","amount":"1.234,56"},{"id":"F3","due_date":"2026-03-11","amount":99.9,"extra":true}]`,
			want: []string{"F1|ACME|2026-03-10|150000", "2|Beta|2026-03-10|123456", "F3||2026-03-11|9990"},
		},
		{
			name: "JSON object wrapper",
			in:   `{"receivables":[{"id":"F1","payer":"ACME","due_date":"2026-03-10","amount":"10"}]}`,
			want: []string{"F1|ACME|2026-03-10|1000"},
		},
		{
			name: "CSV in Portuguese",
			in:   "Nosso número;Pagador;Vencimento;Valor\nN1;ACME LTDA;10/03/2026;1.500,00\n\nN2;Beta;11/03/2026;20,5\n",
			want: []string{"N1|ACME LTDA|2026-03-10|150000", "N2|Beta|2026-03-11|2050"},
		},
		{
			name: "CSV with cents",
			in:   "id,payer,due_date,amount_cents\nA,X,2026-03-10,1999\n",
			want: []string{"A|X|2026-03-10|1999"},
		},
		{name: "JSON duplicate id", in: `[{"id":"A","due_date":"2026-03-10","amount":1},{"id":"A","due_date":"2026-03-10","amount":2}]`, wantErr: "receivables[1].id"},
		{name: "JSON bad date", in: `[{"id":"A","due_date":"31/02/2026","amount":1}]`, wantErr: "receivables[0].due_date"},
		{name: "JSON missing amount", in: `[{"id":"A","due_date":"2026-03-10"}]`, wantErr: "receivables[0].amount"},
		{name: "JSON negative amount", in: `[{"id":"A","due_date":"2026-03-10","amount_cents":-5}]`, wantErr: "must be positive"},
		{name: "JSON exponent", in: `[{"id":"A","due_date":"2026-03-10","amount":1e3}]`, wantErr: "exponents"},
		{name: "JSON object id", in: `[{"id":{},"due_date":"2026-03-10","amount":1}]`, wantErr: "receivables[0].id"},
		{name: "JSON not a list", in: `{"x":1}`, wantErr: "want an array"},
		{name: "CSV no header", in: "A;B;C\n", wantErr: "line 1: header must name"},
		{name: "CSV bad amount", in: "id;vencimento;valor\nA;10/03/2026;abc\n", wantErr: "line 2: amount"},
		{name: "CSV duplicate", in: "id;vencimento;valor\nA;10/03/2026;1\nA;10/03/2026;2\n", wantErr: "line 3: id \"A\" repeats line 2"},
		{name: "CSV empty", in: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseReceivables(context.Background(), []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseReceivables() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseReceivables() error = %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d receivables %+v, want %d", len(got), got, len(tt.want))
			}
			for i, r := range got {
				if s := strings.Join([]string{r.ID, r.Payer, r.DueDate.String(), strconv.FormatInt(r.AmountCents, 10)}, "|"); s != tt.want[i] {
					t.Errorf("receivable %d = %s, want %s", i, s, tt.want[i])
				}
			}
		})
	}
}

// FuzzParseReceivables checks that the receivables parser never panics and
// that what it accepts is valid: ids present and unique, amounts positive.
func FuzzParseReceivables(f *testing.F) {
	for _, s := range []string{
		`[{"id":"F1","payer":"ACME","due_date":"2026-03-10","amount_cents":150000}]`,
		"id;pagador;vencimento;valor\nN1;ACME;10/03/2026;1.500,00\n",
		`{"receivables":[]}`, "id,due,amount\n", `[{"id":1,"due_date":"x","amount":"1"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseReceivables(context.Background(), data)
		if err != nil {
			var pe *statement.ParseError
			if errors.As(err, &pe) && pe.Line < 0 {
				t.Fatalf("negative line: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, r := range got {
			if r.ID == "" || seen[r.ID] || r.AmountCents <= 0 {
				t.Fatalf("invalid receivable accepted: %+v", r)
			}
			seen[r.ID] = true
		}
	})
}

// TestFromJSONHostile checks that a 10 MiB list of empty elements fails at
// the first one without decoding the rest (it used to decode 3.5 M elements,
// about 100 bytes each, before looking at any), and that a list longer than
// MaxReceivables fails at the limit. Not parallel: the allocation counter is
// process-wide.
func TestFromJSONHostile(t *testing.T) {
	empty := []byte("[" + strings.Repeat("{},", 10<<20/3) + "{}]")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := FromJSON(empty)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "receivables[0].id: required") {
		t.Errorf("FromJSON(10 MiB of {}) error = %v, want receivables[0].id", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(empty)) {
		t.Errorf("FromJSON allocated %d bytes for a %d-byte list, want less than its size", n, len(empty))
	}

	var b strings.Builder
	b.WriteString("[")
	for i := range MaxReceivables + 1 {
		fmt.Fprintf(&b, `{"id":"F%d","due_date":"2026-03-10","amount_cents":1},`, i)
	}
	long := strings.TrimSuffix(b.String(), ",") + "]"
	if _, err := FromJSON([]byte(long)); err == nil || !strings.Contains(err.Error(), "more than 100000") {
		t.Errorf("FromJSON(%d receivables) error = %v, want more than %d", MaxReceivables+1, err, MaxReceivables)
	}
}
