package statement

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileSize is the size of the hostile files: the plan's largest upload.
const hostileSize = 10 << 20

// fill repeats unit after prefix up to hostileSize bytes, then adds suffix.
func fill(prefix, unit, suffix string) []byte {
	n := (hostileSize - len(prefix) - len(suffix)) / len(unit)
	return []byte(prefix + strings.Repeat(unit, n) + suffix)
}

// allocated returns how many bytes f allocated on the heap. It is an upper
// bound of the heap f needed at its peak, and deterministic: unlike sampling
// the live heap, it cannot miss a short spike.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileMemory parses 10 MiB files built to make a parser amplify
// memory and checks that what it allocates, all of it, stays within 3× the
// file: each fails at its first line past a limit or streams through.
// (Before the parsers streamed, the first file cost 3.5 GiB.) Not parallel:
// the allocation counter is process-wide.
func TestHostileMemory(t *testing.T) {
	const header = "Data;Historico;Valor\n"
	tests := []struct {
		name    string
		format  string
		data    []byte
		wantErr string // a prefix of the error; "" for none
	}{
		{"CSV: 10 M separators after the header", "csv", fill(header, ";", ""), "line 2: 10485739 bytes in one line (limit 65536)"},
		{"CSV: 10 M separators in the header", "csv", fill("Data;Historico;Valor", ";", "\n"), "line 1: 10485759 bytes in one line (limit 65536)"},
		{"CSV: lines of 256 empty fields", "csv", fill(header, strings.Repeat(";", 255)+"\n", ""), ""},
		{"CSV: lines of 257 fields", "csv", fill(header, strings.Repeat(";", 256)+"\n", ""), "line 2: 257 fields (limit 256)"},
		{"CSV: a quote never closed", "csv", fill(header+"05/01/2026;\"", "x\n", ""), "line 65526: 65537 bytes in the record from line 2 (limit 65536)"},
		{"CSV: blank lines", "csv", fill(header, "\n", ""), "line 2000001: 2000001 records (limit 2000000)"},
		{"CSV: tab-separated fields bomb", "csv", fill("Data\tHistorico\tValor\n05/01/2026\tA\t1,00\n", "\t", "\n"), "line 3: 10485720 bytes in one line (limit 65536)"},
		{"CSV: small Windows-1252 rows up to the transaction limit", "csv", fill(header, "05/01/2026;\x80\x80\x80;1,00\n", ""), "line 200002: more than 200000 transactions"},
		{"OFX: tag flood", "ofx", fill("<OFX>", "<A>", ""), "line 1: </OFX> missing"},
		{"OFX: nested STMTTRN", "ofx", fill("<OFX>", "<STMTTRN>", ""), "line 1: <STMTTRN> inside"},
		{"OFX: a tag never closed", "ofx", fill("<OFX><MEMO", "A", ""), "line 1: malformed tag"},
		{"OFX: one long text", "ofx", fill("<OFX><STMTTRN><MEMO>", "A", ""), "line 1: 10485740 bytes of text between two tags"},
		{"OFX: distinct elements", "ofx", distinctElements(), "line 1: 257 elements in the transaction at line 1 (limit 256)"},
		{"OFX: small transactions up to the limit", "ofx", fill("<OFX>", "<STMTTRN><DTPOSTED>20260105<TRNAMT>1</STMTTRN>", ""), "line 1: more than 200000 transactions"},
		{"OFX: a comment never closed", "ofx", fill("<OFX><!--", "x\n", ""), "line 1: unclosed comment"},
		{"OFX: white space", "ofx", fill("<OFX>", " \n", "</OFX>"), ""},
		{"OFX: no <OFX>", "ofx", fill("", "OFXHEADER:100\n", ""), "line 1: no <OFX> element in the first 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			n := allocated(func() {
				_, err = Parse(context.Background(), bytes.NewReader(tt.data), tt.format, "", CSVOptions{})
			})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Errorf("Parse() error = %v, want %q", err, tt.wantErr)
			}
			ratio := float64(n) / float64(len(tt.data))
			t.Logf("%d MiB allocated for %d MiB (%.2f×)", n>>20, len(tt.data)>>20, ratio)
			if ratio > 3 {
				t.Errorf("allocated %d bytes for a %d-byte file (%.1f×), want at most 3×", n, len(tt.data), ratio)
			}
		})
	}
}

// distinctElements is a 10 MiB transaction of elements <A0>, <A1>…
func distinctElements() []byte {
	var b bytes.Buffer
	b.WriteString("<OFX><STMTTRN>")
	for i := 0; b.Len() < hostileSize-20; i++ {
		fmt.Fprintf(&b, "<A%d>x", i)
	}
	return b.Bytes()
}

// normalCSV is a statement of about size bytes as a bank exports it.
func normalCSV(size int) []byte {
	var b bytes.Buffer
	b.WriteString("Data;Lançamento;Documento;Valor (R$);Saldo (R$)\n")
	for i := 0; b.Len() < size-100; i++ {
		fmt.Fprintf(&b, "%02d/03/2026;PIX RECEBIDO ACME COMERCIO LTDA %d;E%05d;%d,%02d;16.730,45\n", i%28+1, i, i%100000, i%5000, i%100)
	}
	return b.Bytes()
}

// normalOFX is an SGML OFX statement of about size bytes.
func normalOFX(size int) []byte {
	var b bytes.Buffer
	b.WriteString("OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>BRL<BANKACCTFROM><BANKID>341<ACCTID>12345</BANKACCTFROM><BANKTRANLIST>\n")
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "<STMTTRN>\n<TRNTYPE>CREDIT\n<DTPOSTED>202603%02d\n<TRNAMT>%d.%02d\n<FITID>F%d\n<MEMO>PIX RECEBIDO ACME %d\n</STMTTRN>\n", i%28+1, i%5000, i%100, i, i)
	}
	b.WriteString("</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n")
	return b.Bytes()
}

func BenchmarkParseCSV10MiB(b *testing.B) {
	benchParse(b, normalCSV(10<<20), "csv")
}

func BenchmarkParseOFX10MiB(b *testing.B) {
	benchParse(b, normalOFX(10<<20), "ofx")
}

func benchParse(b *testing.B, data []byte, format string) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var n int
	cpu0 := cpuTime()
	for b.Loop() {
		st, err := Parse(context.Background(), bytes.NewReader(data), format, "", CSVOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n = len(st.Transactions)
	}
	// CPU time of the process per parse: on a shared machine, wall time
	// measures the neighbours too.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n), "transactions")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
