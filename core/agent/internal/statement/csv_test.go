package statement

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// row is a compact expectation: date, amount in cents, description, id.
type row struct {
	date  string
	cents int64
	desc  string
	id    string
}

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		opts        CSVOptions
		want        []row
		wantSkipped int
		wantErrLine int // 0: no error
		wantErrText string
	}{
		{
			name: "semicolon, Brazilian amounts, preamble, balance rows",
			in: "Banco Exemplo S.A.\nExtrato de conta corrente\nAgência: 1234;Conta: 56789-0\n\n" +
				"Data;Histórico;Documento;Valor (R$);Saldo (R$)\n" +
				"01/03/2026;SALDO ANTERIOR;;;10.000,00\n" +
				"02/03/2026;PIX RECEBIDO JOAO;123;1.234,56;11.234,56\n" +
				"03/03/2026;TARIFA PACOTE;;-45,90;11.188,66\n" +
				";Total;;1.188,66;\n",
			want:        []row{{"2026-03-02", 123456, "PIX RECEBIDO JOAO", "123"}, {"2026-03-03", -4590, "TARIFA PACOTE", ""}},
			wantSkipped: 5,
		},
		{
			name: "comma, ISO dates, quoted fields with separators and quotes",
			in: "date,description,amount\n" +
				"2026-03-02,\"PIX, \"\"recebido\"\"\",1234.56\n" +
				"2026-03-03,BOLETO,-1234.56\n",
			want: []row{{"2026-03-02", 123456, `PIX, "recebido"`, ""}, {"2026-03-03", -123456, "BOLETO", ""}},
		},
		{
			name: "BOM, CRLF, credit and debit columns",
			in:   "\ufeffData;Descrição;Crédito;Débito\r\n05/01/2026;TED RECEBIDA;500,00;\r\n06/01/2026;IOF;;1,23\r\n07/01/2026;PAG;0,00;-10,00\r\n",
			want: []row{{"2026-01-05", 50000, "TED RECEBIDA", ""}, {"2026-01-06", -123, "IOF", ""}, {"2026-01-07", -1000, "PAG", ""}},
		},
		{
			name: "unsigned amount with D/C column",
			in:   "Data;Lançamento;Valor;D/C\n05/01/2026;COMPRA;10,00;D\n06/01/2026;PIX;20,00;C\n",
			want: []row{{"2026-01-05", -1000, "COMPRA", ""}, {"2026-01-06", 2000, "PIX", ""}},
		},
		{
			name: "headerless tab-separated with balance column",
			in:   "05/01/2026\tPIX RECEBIDO\t100,00\t1.100,00\n06/01/2026\tTARIFA\t-2,50\t1.097,50\n",
			want: []row{{"2026-01-05", 10000, "PIX RECEBIDO", ""}, {"2026-01-06", -250, "TARIFA", ""}},
		},
		{
			name:        "repeated header on a new page",
			in:          "Data;Descrição;Valor\n05/01/2026;A;1,00\nData;Descrição;Valor\n06/01/2026;B;2,00\n",
			want:        []row{{"2026-01-05", 100, "A", ""}, {"2026-01-06", 200, "B", ""}},
			wantSkipped: 1,
		},
		{
			name: "configured columns",
			in:   "Quando;O que;Quanto\n05/01/2026;A;1,00\n",
			opts: CSVOptions{Columns: Columns{Date: "quando", Description: "O QUE", Amount: "Quanto"}},
			want: []row{{"2026-01-05", 100, "A", ""}},
		},
		{
			name: "keep balance rows",
			in:   "Data;Descrição;Valor\n05/01/2026;SALDO DO DIA;1,00\n",
			opts: CSVOptions{KeepBalanceRows: true},
			want: []row{{"2026-01-05", 100, "SALDO DO DIA", ""}},
		},
		{
			name: "windows-1252 text",
			in:   "Data;Descri\xe7\xe3o;Valor\n05/01/2026;Servi\xe7o;1,00\n",
			want: []row{{"2026-01-05", 100, "Serviço", ""}},
		},
		{name: "bad date", in: "Data;Descrição;Valor\n05/01/2026;A;1,00\n31/02/2026;B;2,00\n", wantErrLine: 3, wantErrText: "no such day"},
		{name: "bad amount", in: "Data;Descrição;Valor\n05/01/2026;A;1,2,3\n", wantErrLine: 2, wantErrText: "column 3"},
		{name: "short row", in: "Data;Descrição;Valor\n05/01/2026;A\n", wantErrLine: 2, wantErrText: "at least 3 fields"},
		{name: "unterminated quote", in: "Data;Descrição;Valor\n05/01/2026;\"A;1,00\n", wantErrLine: 2, wantErrText: "quote"},
		{name: "both credit and debit", in: "Data;Descrição;Crédito;Débito\n05/01/2026;A;1,00;2,00\n", wantErrLine: 2, wantErrText: "both credit"},
		{name: "no header, no data", in: "hello;world;again\nfoo;bar;baz\n", wantErrLine: 1, wantErrText: "no header"},
		{name: "empty", in: "\n\n", wantErrLine: 1, wantErrText: "empty"},
		{name: "configured column missing", in: "Data;Descrição;Valor\n", opts: CSVOptions{Columns: Columns{Date: "Data", Amount: "Quanto"}}, wantErrLine: 1, wantErrText: `no column "Quanto"`},
		{name: "too many", in: "Data;Descrição;Valor\n05/01/2026;A;1,00\n06/01/2026;B;1,00\n", opts: CSVOptions{Limits: Limits{MaxTransactions: 1}}, wantErrLine: 3, wantErrText: "more than 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := ParseCSV(context.Background(), strings.NewReader(tt.in), tt.opts)
			if tt.wantErrLine != 0 {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != tt.wantErrLine || !strings.Contains(pe.Msg, tt.wantErrText) {
					t.Fatalf("ParseCSV() error = %v; want line %d containing %q", err, tt.wantErrLine, tt.wantErrText)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCSV() error = %v", err)
			}
			assertRows(t, st, tt.want)
			if st.Skipped != tt.wantSkipped {
				t.Errorf("Skipped = %d, want %d", st.Skipped, tt.wantSkipped)
			}
		})
	}
}

func assertRows(t *testing.T, st *Statement, want []row) {
	t.Helper()
	if len(st.Transactions) != len(want) {
		t.Fatalf("got %d transactions %+v, want %d", len(st.Transactions), st.Transactions, len(want))
	}
	for i, w := range want {
		g := st.Transactions[i]
		if g.Date.String() != w.date || g.AmountCents != w.cents || g.Description != w.desc || g.ID != w.id {
			t.Errorf("transaction %d = %s %d %q %q; want %s %d %q %q", i, g.Date, g.AmountCents, g.Description, g.ID, w.date, w.cents, w.desc, w.id)
		}
	}
}

func TestParseCSVCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ParseCSV(ctx, strings.NewReader("Data;Descrição;Valor\n05/01/2026;A;1,00\n"), CSVOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ParseCSV(cancelled) = %v", err)
	}
}

// FuzzParseCSV checks that the CSV parser never panics, reports errors as
// *ParseError with a line inside the input, returns transactions whose lines
// lie inside the input, reads the same from a reader that returns one byte
// at a time, and keeps these properties under tiny limits.
func FuzzParseCSV(f *testing.F) {
	seeds := []string{
		"Data;Histórico;Valor\n05/01/2026;PIX;1.234,56\n",
		"date,description,amount\n2026-01-05,\"a,b\",-1.5\n",
		"\ufeffData;Descrição;Crédito;Débito\r\n05/01/2026;TED;1,00;\r\n",
		"05/01/2026\tPIX\t1,00\t2,00\n",
		"Data;Descrição;Valor\n05/01/2026;\"A;1,00\n",
		"x\n\n;;;\n",
		// Hostile shapes, small: a field bomb, a quote never closed, blank lines,
		// a long line, Windows-1252 and UTF-16.
		"Data;Historico;Valor\n" + strings.Repeat(";", 300),
		"Data;Historico;Valor\n05/01/2026;\"" + strings.Repeat("x\n", 40),
		"Data;Historico;Valor\n" + strings.Repeat("\n", 40),
		"Data;Historico;Valor\n05/01/2026;" + strings.Repeat("y", 100) + ";1,00\n",
		"Data;Hist\xf3rico;Valor\n05/01/2026;Servi\xe7o;1,00\n",
		"\xff\xfeD\x00;\x00V\x00\n\x00",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParser(t, data, func(r io.Reader, lim Limits) (*Statement, error) {
			return ParseCSV(context.Background(), r, CSVOptions{Limits: lim})
		})
	})
}

// tinyLimits make short fuzz inputs cross every limit.
var tinyLimits = Limits{MaxTransactions: 3, MaxLineBytes: 32, MaxFields: 4, MaxRecords: 6, MaxDecodedBytes: 256}

// checkParser runs parse on data with the default limits, one byte at a
// time, and with tinyLimits, and checks what the fuzz targets promise.
func checkParser(t *testing.T, data []byte, parse func(io.Reader, Limits) (*Statement, error)) {
	t.Helper()
	lines := strings.Count(Decode(data), "\n") + 1
	st, err := parse(bytes.NewReader(data), Limits{})
	check := func(st *Statement, err error) {
		t.Helper()
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error line %d outside 1..%d: %v", pe.Line, lines, err)
			}
			return
		}
		for _, tx := range st.Transactions {
			if tx.Line < 1 || tx.Line > lines {
				t.Fatalf("transaction line %d outside 1..%d", tx.Line, lines)
			}
		}
	}
	check(st, err)
	st1, err1 := parse(iotest.OneByteReader(bytes.NewReader(data)), Limits{})
	if fmt.Sprint(err) != fmt.Sprint(err1) || !reflect.DeepEqual(st, st1) {
		t.Fatalf("one byte at a time: %v, %v; want %v, %v", st1, err1, st, err)
	}
	check(parse(bytes.NewReader(data), tinyLimits))
}
