package statement

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCSVLimits(t *testing.T) {
	const header = "Data;Histórico;Valor\n"
	const row = "05/01/2026;PIX;1,00\n"
	tests := []struct {
		name    string
		in      string
		lim     Limits
		wantErr string // the whole message
	}{
		{
			name:    "fields in a record",
			in:      header + row + "05/01/2026;PIX;1,00" + strings.Repeat(";", 300) + "\n" + row,
			wantErr: "line 3: 303 fields (limit 256)",
		},
		{
			name:    "fields, configured",
			in:      header + row + "05/01/2026;PIX;1,00;x;y\n",
			lim:     Limits{MaxFields: 4},
			wantErr: "line 3: 5 fields (limit 4)",
		},
		{
			name:    "fields in a header line of separators",
			in:      "Data;Historico;Valor" + strings.Repeat(";", 1000) + "\n" + row,
			wantErr: "line 1: 1003 fields (limit 256)",
		},
		{
			name:    "quoted separators are not fields",
			in:      header + "05/01/2026;\"" + strings.Repeat(";", 300) + "\";1,00\n",
			lim:     Limits{},
			wantErr: "",
		},
		{
			name:    "line length",
			in:      header + row + "05/01/2026;" + strings.Repeat("x", 70_000) + ";1,00\n" + row,
			wantErr: "line 3: 70016 bytes in one line (limit 65536)",
		},
		{
			name:    "line length, configured, last line without newline",
			in:      header + strings.Repeat("y", 101),
			lim:     Limits{MaxLineBytes: 100},
			wantErr: "line 2: 101 bytes in one line (limit 100)",
		},
		{
			name:    "quoted field spanning lines",
			in:      header + "05/01/2026;\"never closed\n" + strings.Repeat("more text\n", 20),
			lim:     Limits{MaxLineBytes: 100},
			wantErr: "line 11: 105 bytes in the record from line 2 (limit 100)",
		},
		{
			name:    "records, blank lines count",
			in:      header + row + "\n\n" + row,
			lim:     Limits{MaxRecords: 4},
			wantErr: "line 5: 5 records (limit 4)",
		},
		{
			name:    "decoded text",
			in:      header + strings.Repeat(row, 10),
			lim:     Limits{MaxDecodedBytes: 100},
			wantErr: "line 5: 102 bytes of text (limit 100)",
		},
		{
			name:    "Windows-1252 grows when decoded",
			in:      header + strings.Repeat("05/01/2026;\x80\x80\x80\x80;1,00\n", 5),
			lim:     Limits{MaxDecodedBytes: 100},
			wantErr: "line 4: 109 bytes of text (limit 100)",
		},
		{
			name:    "transactions",
			in:      header + strings.Repeat(row, 3),
			lim:     Limits{MaxTransactions: 2},
			wantErr: "line 4: more than 2 transactions",
		},
		{
			name:    "a bad row before the violation is reported first",
			in:      header + "05/13/2026;PIX;1,00\n" + strings.Repeat(";", 300) + "\n",
			wantErr: "line 2: column 1:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := ParseCSV(context.Background(), strings.NewReader(tt.in), CSVOptions{Limits: tt.lim})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseCSV() error = %v, want none", err)
				}
				if len(st.Transactions) != 1 {
					t.Fatalf("ParseCSV() read %d transactions, want 1", len(st.Transactions))
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("ParseCSV() error = %v; want %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "limit") && !errors.Is(err, ErrLimit) {
				t.Errorf("error %v does not wrap ErrLimit", err)
			}
		})
	}
}

func TestOFXLimits(t *testing.T) {
	const trn = "<STMTTRN>\n<TRNTYPE>CREDIT\n<DTPOSTED>20260105\n<TRNAMT>1.00\n</STMTTRN>\n"
	tests := []struct {
		name    string
		in      string
		lim     Limits
		wantErr string // the whole message; "" for none
	}{
		{
			name:    "text between tags",
			in:      "<OFX>\n<STMTTRN>\n<MEMO>" + strings.Repeat("A", 200) + "\n</STMTTRN></OFX>",
			lim:     Limits{MaxLineBytes: 100},
			wantErr: "line 3: 201 bytes of text between two tags (limit 100)",
		},
		{
			name:    "text between tags, default",
			in:      "<OFX>\n<STMTTRN>\n<MEMO>" + strings.Repeat("A", 70_000) + "\n</STMTTRN></OFX>",
			wantErr: "line 3: 70001 bytes of text between two tags (limit 65536)",
		},
		{
			name: "white space between aggregates is not text",
			in:   "<OFX>" + strings.Repeat(" \n", 200) + trn + "</OFX>",
			lim:  Limits{MaxLineBytes: 100},
		},
		{
			name:    "elements in a transaction",
			in:      "<OFX>\n<STMTTRN>\n<A1>x\n<A2>x\n<A3>x\n<A4>x\n</STMTTRN></OFX>",
			lim:     Limits{MaxFields: 3},
			wantErr: "line 6: 4 elements in the transaction at line 2 (limit 3)",
		},
		{
			name:    "no <OFX> in the first bytes",
			in:      strings.Repeat("OFXHEADER:100\n", 10) + "<OFX></OFX>",
			lim:     Limits{MaxLineBytes: 100},
			wantErr: "line 1: no <OFX> element in the first 100 bytes",
		},
		{
			name:    "tag longer than a tag can be",
			in:      "<OFX>\n<" + strings.Repeat("A", 1000),
			wantErr: "line 2: malformed tag <AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA…>",
		},
		{
			name:    "decoded text",
			in:      "<OFX>\n" + strings.Repeat(trn, 10) + "</OFX>",
			lim:     Limits{MaxDecodedBytes: 100},
			wantErr: "line 8: 101 bytes of text (limit 100)",
		},
		{
			name:    "transactions",
			in:      "<OFX>\n" + trn + trn + trn + "</OFX>",
			lim:     Limits{MaxTransactions: 2},
			wantErr: "line 12: more than 2 transactions",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseOFX(context.Background(), strings.NewReader(tt.in), tt.lim)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseOFX() error = %v, want none", err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("ParseOFX() error = %v; want %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "limit") && !errors.Is(err, ErrLimit) {
				t.Errorf("error %v does not wrap ErrLimit", err)
			}
		})
	}
}
