package statement

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

const sgmlOFX = `OFXHEADER:100
DATA:OFXSGML
VERSION:102
SECURITY:NONE
ENCODING:USASCII
CHARSET:1252
COMPRESSION:NONE
OLDFILEUID:NONE
NEWFILEUID:NONE

<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20260131120000[-3:BRT]<LANGUAGE>POR</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS><CURDEF>BRL
<BANKACCTFROM><BANKID>341<ACCTID>12345-6<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST><DTSTART>20260101<DTEND>20260131
<STMTTRN>
<TRNTYPE>CREDIT
<DTPOSTED>20260105120000[-3:BRT]
<TRNAMT>1234.56
<FITID>A1
<NAME>PIX RECEBIDO
<MEMO>JOAO &amp; FILHOS
</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20260106
<TRNAMT>-45,90
<FITID>A2
<MEMO>TARIFA PACOTE
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>1188.66<DTASOF>20260131</LEDGERBAL>
</STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
`

const xmlOFX = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
<OFX>
  <BANKMSGSRSV1><STMTTRNRS><STMTRS>
    <CURDEF>BRL</CURDEF>
    <BANKACCTFROM><BANKID>001</BANKID><ACCTID>999</ACCTID></BANKACCTFROM>
    <BANKTRANLIST>
      <!-- a comment -->
      <STMTTRN>
        <TRNTYPE>XFER</TRNTYPE>
        <DTPOSTED>20260210000000.000[-03:BRT]</DTPOSTED>
        <TRNAMT>+200.00</TRNAMT>
        <FITID>X1</FITID>
        <NAME>TED RECEBIDA</NAME>
        <MEMO>TED RECEBIDA</MEMO>
      </STMTTRN>
    </BANKTRANLIST>
  </STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
`

func TestParseOFX(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		want         []row
		wantAccount  string
		wantCurrency string
	}{
		{
			name:         "SGML 1.x",
			in:           sgmlOFX,
			want:         []row{{"2026-01-05", 123456, "PIX RECEBIDO - JOAO & FILHOS", "A1"}, {"2026-01-06", -4590, "TARIFA PACOTE", "A2"}},
			wantAccount:  "341/12345-6",
			wantCurrency: "BRL",
		},
		{
			name:         "XML 2.x",
			in:           xmlOFX,
			want:         []row{{"2026-02-10", 20000, "TED RECEBIDA", "X1"}},
			wantAccount:  "001/999",
			wantCurrency: "BRL",
		},
		{
			name: "no transactions, no header",
			in:   "<OFX><BANKMSGSRSV1></BANKMSGSRSV1></OFX>",
		},
		{
			name: "lower-case tags, windows-1252",
			in:   "<ofx><stmttrn><trntype>debit<dtposted>20260301<trnamt>-1.00<memo>Servi\xe7o</stmttrn></ofx>",
			want: []row{{"2026-03-01", -100, "Serviço", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := ParseOFX(context.Background(), strings.NewReader(tt.in), Limits{})
			if err != nil {
				t.Fatalf("ParseOFX() error = %v", err)
			}
			assertRows(t, st, tt.want)
			if st.Account != tt.wantAccount || st.Currency != tt.wantCurrency {
				t.Errorf("account, currency = %q, %q; want %q, %q", st.Account, st.Currency, tt.wantAccount, tt.wantCurrency)
			}
		})
	}
}

func TestParseOFXErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantLine int
		wantText string
	}{
		{name: "not OFX", in: "Data;Valor\n", wantLine: 1, wantText: "no <OFX>"},
		{name: "garbage header", in: "hello world\n<OFX></OFX>", wantLine: 1, wantText: "unexpected text"},
		{name: "unclosed STMTTRN", in: "<OFX>\n<STMTTRN>\n<TRNAMT>1.00\n</OFX>", wantLine: 4, wantText: "</OFX> before </STMTTRN>"},
		{name: "truncated", in: "<OFX>\n<STMTTRN>\n<TRNAMT>1.00\n", wantLine: 2, wantText: "never closed"},
		{name: "nested STMTTRN", in: "<OFX>\n<STMTTRN>\n<STMTTRN>\n", wantLine: 3, wantText: "inside"},
		{name: "stray close", in: "<OFX>\n</STMTTRN>\n</OFX>", wantLine: 2, wantText: "without"},
		{name: "missing amount", in: "<OFX>\n<STMTTRN>\n<DTPOSTED>20260101\n</STMTTRN></OFX>", wantLine: 2, wantText: "without TRNAMT"},
		{name: "missing date", in: "<OFX>\n<STMTTRN>\n<TRNAMT>1\n</STMTTRN></OFX>", wantLine: 2, wantText: "without DTPOSTED"},
		{name: "bad date", in: "<OFX>\n<STMTTRN>\n<DTPOSTED>20261301\n<TRNAMT>1\n</STMTTRN></OFX>", wantLine: 3, wantText: "DTPOSTED"},
		{name: "bad date suffix", in: "<OFX>\n<STMTTRN>\n<DTPOSTED>20260101xx\n<TRNAMT>1\n</STMTTRN></OFX>", wantLine: 3, wantText: "DTPOSTED"},
		{name: "bad amount", in: "<OFX>\n<STMTTRN>\n<DTPOSTED>20260101\n<TRNAMT>1,2,3\n</STMTTRN></OFX>", wantLine: 4, wantText: "TRNAMT"},
		{name: "unknown type", in: "<OFX>\n<STMTTRN>\n<TRNTYPE>GIFT\n<DTPOSTED>20260101\n<TRNAMT>1\n</STMTTRN></OFX>", wantLine: 3, wantText: "TRNTYPE"},
		{name: "repeated field", in: "<OFX>\n<STMTTRN>\n<TRNAMT>1\n<TRNAMT>2\n</STMTTRN></OFX>", wantLine: 4, wantText: "repeated"},
		{name: "malformed tag", in: "<OFX>\n\n<TRN AMT>1\n</OFX>", wantLine: 3, wantText: "malformed tag"},
		{name: "unclosed tag", in: "<OFX>\n<TRNAMT", wantLine: 2, wantText: "unclosed tag"},
		{name: "no close", in: "<OFX>\n<CURDEF>BRL\n", wantLine: 2, wantText: "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseOFX(context.Background(), strings.NewReader(tt.in), Limits{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.wantLine || !strings.Contains(pe.Msg, tt.wantText) {
				t.Fatalf("ParseOFX() error = %v; want line %d containing %q", err, tt.wantLine, tt.wantText)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct{ data, name, want string }{
		{sgmlOFX, "extrato.txt", "ofx"},
		{xmlOFX, "", "ofx"},
		{"", "extrato.OFX", "ofx"},
		{"Data;Valor\n", "extrato.csv", "csv"},
		{"Data;Valor\n", "", "csv"},
	}
	for _, tt := range tests {
		if got := DetectFormat([]byte(tt.data), tt.name); got != tt.want {
			t.Errorf("DetectFormat(%.20q, %q) = %q, want %q", tt.data, tt.name, got, tt.want)
		}
	}
}

// FuzzParseOFX checks that the OFX parser never panics, reports errors as
// *ParseError with a line inside the input, reads the same one byte at a
// time, and keeps these properties under tiny limits.
func FuzzParseOFX(f *testing.F) {
	for _, s := range []string{
		sgmlOFX, xmlOFX, "<OFX><STMTTRN><TRNAMT>1</STMTTRN></OFX>", "<OFX><!-- x", "<?x", "<OFX>&#x41;</OFX>",
		// Hostile shapes, small: nested and flooded tags, a tag never closed,
		// a long text, many elements, white space.
		"<OFX>" + strings.Repeat("<STMTTRN>", 20),
		"<OFX>" + strings.Repeat("<A>", 50) + "</OFX>",
		"<OFX>\n<MEMO" + strings.Repeat("A", 200),
		"<OFX><STMTTRN><MEMO>" + strings.Repeat("A", 100) + "</STMTTRN></OFX>",
		"<OFX><STMTTRN><A1>x<A2>x<A3>x<A4>x<A5>x</STMTTRN></OFX>",
		"<OFX>" + strings.Repeat(" \r\n", 30) + "</OFX>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParser(t, data, func(r io.Reader, lim Limits) (*Statement, error) {
			return ParseOFX(context.Background(), r, lim)
		})
	})
}
