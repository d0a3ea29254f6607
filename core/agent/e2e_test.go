package agent

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent/internal/money"
	"github.com/kobana/kadu/core/agent/internal/statement"
)

// genTx is a generated statement line and what the runner should make of it.
type genTx struct {
	date     statement.Date
	cents    int64
	desc     string
	category string // the category the built-in rules must give it
}

type genReceivable struct {
	id, payer string
	due       statement.Date
	cents     int64
	fate      string // "csv", "ofx", "late" (paid in the CSV with a 2% fee), "unpaid"
}

// bankData is a realistic month of a company account: a CSV export of a few
// hundred lines, an OFX file, and the receivables they should settle.
type bankData struct {
	csv, ofx, receivablesCSV []byte
	csvTxs, ofxTxs           []genTx
	receivables              []genReceivable
}

func day(t testing.TB, d int) statement.Date {
	t.Helper()
	v, ok := statement.NewDate(2026, time.March, d)
	if !ok {
		t.Fatalf("bad day %d", d)
	}
	return v
}

// brAmount writes cents as a Brazilian bank does: "-1.234,56".
func brAmount(c int64) string { return strings.Replace(money.FormatBRL(c), "R$ ", "", 1) }

func brDate(d statement.Date) string { return d.Time().Format("02/01/2006") }

func generateBankData(t testing.TB) *bankData {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 3))
	payers := []string{
		"Padaria Pão Quente Ltda", "Oficina Mecânica Irmãos Souza", "Clínica Sorriso", "Mercadinho Boa Vista",
		"Escola Pequeno Príncipe", "Academia Corpo Ativo", "Farmácia Popular Centro", "Restaurante Sabor Mineiro",
		"Construtora Alicerce", "Pet Shop Amigo Fiel", "Livraria Saber", "Transportadora Rápida",
	}
	b := &bankData{}
	// 46 receivables: 34 paid in the CSV, 6 in the OFX, 3 late with a fee, 3 unpaid.
	for i := range 46 {
		r := genReceivable{
			id:    fmt.Sprintf("NN%05d", 1001+i),
			payer: payers[i%len(payers)],
			cents: 50_000 + int64(i)*7_919 + 37,
		}
		switch {
		case i < 34:
			r.fate, r.due = "csv", day(t, 4+i%22)
		case i < 40:
			r.fate, r.due = "ofx", day(t, 5+(i-34)*3)
		case i < 43:
			r.fate, r.due = "late", day(t, 2+(i-40))
		default:
			r.fate, r.due = "unpaid", day(t, 27+(i-43)%2)
		}
		b.receivables = append(b.receivables, r)
	}
	amounts := map[int64]bool{}
	for _, r := range b.receivables {
		amounts[r.cents] = true
	}
	for _, r := range b.receivables {
		if amounts[r.cents*102/100] {
			t.Fatalf("fee amount of %s collides with another receivable", r.id)
		}
	}

	payment := func(r genReceivable, i int, cents int64, d statement.Date) genTx {
		upper := strings.ToUpper(r.payer)
		switch i % 3 {
		case 0:
			return genTx{d, cents, "PIX RECEBIDO " + upper, "pix_recebidos"}
		case 1:
			return genTx{d, cents, "LIQUIDACAO BOLETO " + r.id, "boletos_recebidos"}
		}
		return genTx{d, cents, "TED RECEBIDA 341 " + upper, "transferencias_recebidas"}
	}
	// Noise: what else happens on a company account in a month.
	noise := []struct {
		desc, category string
		lo, hi         int64 // cents; negative = debit
	}{
		{"TARIFA PIX", "tarifas_bancarias", -350, -150},
		{"IOF S/ OPERACAO DE CREDITO", "impostos", -2_500, -100},
		{"PIX ENVIADO FORNECEDOR %d", "pix_enviados", -250_000, -5_000},
		{"PAGTO TITULO BANCO %d", "boletos_pagos", -300_000, -10_000},
		{"CONTA DE ENERGIA ENEL", "contas_consumo", -90_000, -20_000},
		{"COMPRA CARTAO MERCADO %d", "cartao", -40_000, -1_000},
		{"SAQUE 24H BANCO24HORAS", "saques", -100_000, -20_000},
		{"DARF SIMPLES NACIONAL", "impostos", -500_000, -100_000},
		{"TED ENVIADA ALUGUEL", "transferencias_enviadas", -800_000, -800_000},
		{"RENDIMENTO APLICACAO AUTOMATICA", "rendimentos", 100, 5_000},
		{"PIX RECEBIDO CLIENTE AVULSO %d", "pix_recebidos", 1_000, 9_999},
		{"VENDAS CIELO DEBITO", "vendas_cartao", 2_000, 9_000},
		{"ESTORNO TARIFA", "estornos", 150, 350},
		{"DIVERSOS REF %d", "outros", -9_000, -100},
	}
	pick := func(n int) genTx {
		k := noise[n%len(noise)]
		desc := k.desc
		if strings.Contains(desc, "%d") {
			desc = fmt.Sprintf(desc, 100+rng.IntN(900))
		}
		cents := k.lo
		if k.hi > k.lo {
			cents = k.lo + rng.Int64N(k.hi-k.lo+1)
		}
		return genTx{day(t, 1+rng.IntN(31)), cents, desc, k.category}
	}

	for i, r := range b.receivables {
		switch r.fate {
		case "csv":
			b.csvTxs = append(b.csvTxs, payment(r, i, r.cents, r.due+statement.Date(rng.IntN(5)-2)))
		case "late":
			b.csvTxs = append(b.csvTxs, payment(r, i, r.cents*102/100, r.due+statement.Date(5+rng.IntN(4))))
		case "ofx":
			b.ofxTxs = append(b.ofxTxs, genTx{r.due + 1, r.cents, "PIX RECEBIDO - " + strings.ToUpper(r.payer), "pix_recebidos"})
		}
	}
	for n := 0; len(b.csvTxs) < 300; n++ {
		b.csvTxs = append(b.csvTxs, pick(n))
	}
	for n := 0; len(b.ofxTxs) < 20; n++ {
		b.ofxTxs = append(b.ofxTxs, pick(n*5+3))
	}
	slices.SortStableFunc(b.csvTxs, func(a, b genTx) int { return int(a.date - b.date) })
	slices.SortStableFunc(b.ofxTxs, func(a, b genTx) int { return int(a.date - b.date) })

	// The CSV as a Brazilian bank exports it: title lines, a header, daily
	// balances, Windows-1252, and a footer.
	var c strings.Builder
	c.WriteString("Banco Exemplo S.A.\r\nExtrato de Conta Corrente\r\nAgência: 1234-5;Conta: 67890-1\r\nPeríodo: 01/03/2026 a 31/03/2026\r\n\r\n")
	c.WriteString("Data;Histórico;Documento;Valor (R$);Saldo (R$)\r\n")
	balance := int64(10_000_000)
	fmt.Fprintf(&c, "01/03/2026;SALDO ANTERIOR;;;%s\r\n", brAmount(balance))
	for i, tx := range b.csvTxs {
		balance += tx.cents
		desc := tx.desc
		if strings.Contains(desc, ";") {
			desc = `"` + desc + `"`
		}
		fmt.Fprintf(&c, "%s;%s;%06d;%s;%s\r\n", brDate(tx.date), desc, 500_000+i, brAmount(tx.cents), brAmount(balance))
		if i%40 == 39 {
			fmt.Fprintf(&c, "%s;SALDO DO DIA;;;%s\r\n", brDate(tx.date), brAmount(balance))
		}
	}
	fmt.Fprintf(&c, ";Total de lançamentos: %d;;;\r\n", len(b.csvTxs))
	b.csv = latin1(t, c.String())

	var o strings.Builder
	o.WriteString("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n")
	o.WriteString("<OFX>\n<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20260401<LANGUAGE>POR</SONRS></SIGNONMSGSRSV1>\n")
	o.WriteString("<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>BRL\n")
	o.WriteString("<BANKACCTFROM><BANKID>0341<BRANCHID>1234<ACCTID>67890-1<ACCTTYPE>CHECKING</BANKACCTFROM>\n")
	o.WriteString("<BANKTRANLIST><DTSTART>20260301<DTEND>20260331\n")
	for i, tx := range b.ofxTxs {
		kind := "DEBIT"
		if tx.cents > 0 {
			kind = "CREDIT"
		}
		name, memo, _ := strings.Cut(tx.desc, " - ")
		fmt.Fprintf(&o, "<STMTTRN>\n<TRNTYPE>%s\n<DTPOSTED>%s120000[-3:BRT]\n<TRNAMT>%s\n<FITID>OFX%04d\n<NAME>%s\n", kind,
			strings.ReplaceAll(tx.date.String(), "-", ""), money.FormatDecimal(tx.cents), i, name)
		if memo != "" {
			fmt.Fprintf(&o, "<MEMO>%s\n", memo)
		}
		o.WriteString("</STMTTRN>\n")
	}
	o.WriteString("</BANKTRANLIST><LEDGERBAL><BALAMT>0.00<DTASOF>20260331</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1>\n</OFX>\n")
	b.ofx = []byte(o.String())

	var rc strings.Builder
	rc.WriteString("Nosso Número;Pagador;Vencimento;Valor\n")
	for _, r := range b.receivables {
		fmt.Fprintf(&rc, "%s;%s;%s;%s\n", r.id, r.payer, brDate(r.due), brAmount(r.cents))
	}
	b.receivablesCSV = []byte(rc.String())
	return b
}

// latin1 encodes s in ISO-8859-1, as many bank exports still are.
func latin1(t testing.TB, s string) []byte {
	t.Helper()
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			t.Fatalf("%q is not Latin-1", r)
		}
		out = append(out, byte(r))
	}
	return out
}

func memFileInput(id, name, contentType string, data []byte) InputFile {
	return InputFile{
		ID: id, Filename: name, ContentType: contentType, Size: int64(len(data)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
	}
}

const reconciliationPlaybook = `{
  "version": 1,
  "description": "Month-end reconciliation of receivables against the bank statements",
  "steps": [
    {"id": "csv", "type": "parse_statement", "title": "Read the CSV statement", "params": {"source": {"file_name": "extrato*.csv"}}},
    {"id": "ofx", "type": "parse_statement", "params": {"source": {"file_index": 1}, "format": "ofx"}},
    {"id": "categories", "type": "categorize"},
    {"id": "recon", "type": "reconcile", "params": {
      "receivables": {"file_id_pointer": "/input/receivables_file_id"},
      "date_window_days": 3, "tolerance_percent": 2.5, "tolerance_window_days": 10}},
    {"id": "summary", "type": "summarize", "params": {"language": "pt-BR"}},
    {"id": "recon_file", "type": "write_output", "params": {"content": "reconciliation", "filename": "conciliacao"}},
    {"id": "summary_file", "type": "write_output", "params": {"content": "summary", "format": "json"}}
  ]
}`

func TestBuiltinReconcilesRealisticStatements(t *testing.T) {
	b := generateBankData(t)
	if n := bytes.Count(b.csv, []byte("\n")); n < 300 {
		t.Fatalf("generated CSV has %d lines, want a few hundred", n)
	}
	job := &Job{
		ExecutionID: "exe_1", TaskID: "tsk_1", OrgID: "org_1",
		Playbook: json.RawMessage(reconciliationPlaybook),
		Input:    json.RawMessage(`{"receivables_file_id": "file_rec"}`),
		Files: []InputFile{
			memFileInput("file_csv", "extrato-marco.csv", "text/csv", b.csv),
			memFileInput("file_ofx", "extrato-marco.ofx", "application/x-ofx", b.ofx),
			memFileInput("file_rec", "recebiveis.csv", "text/csv", b.receivablesCSV),
		},
	}
	sink := newMemSink()
	out, err := NewBuiltinRunner(nil).Run(context.Background(), job, sink)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if out.Status != StatusSucceeded {
		t.Fatalf("Run() status = %s, failure = %+v", out.Status, out.Failure)
	}

	// Costs: 5 + 5 + 2 + 10 + 2 + 3 + 3, one charge per step, in order.
	if want := []int64{5, 5, 2, 10, 2, 3, 3}; !slices.Equal(sink.chargesCopy(), want) {
		t.Errorf("charges = %v, want %v", sink.chargesCopy(), want)
	}
	if out.CostCents != 30 {
		t.Errorf("CostCents = %d, want 30", out.CostCents)
	}
	if cost, err := ValidatePlaybook(job.Playbook); err != nil || cost != 30 {
		t.Errorf("ValidatePlaybook() = %d, %v; want 30", cost, err)
	}

	// Steps: each one running, then succeeded with its cost.
	for _, id := range []string{"csv", "ofx", "categories", "recon", "summary", "recon_file", "summary_file"} {
		s := sink.steps[id]
		if s.Status != StepSucceeded || s.FinishedAt.IsZero() || s.Summary == "" {
			t.Errorf("step %s = %+v, want succeeded with a summary", id, s)
		}
	}
	if len(sink.events) != 14 {
		t.Errorf("%d RecordStep calls, want 14 (start and end of 7 steps)", len(sink.events))
	}

	// What the generator knows.
	var (
		wantMatchedExact, wantMatchedLate int
		wantUnmatched                     []string
		wantUnexpected                    int
		wantUnexpectedCents               int64
		wantCat                           = map[string][3]int64{} // count, inflow, outflow
		wantIn, wantOut                   int64
	)
	for _, r := range b.receivables {
		switch r.fate {
		case "csv", "ofx":
			wantMatchedExact++
		case "late":
			wantMatchedLate++
		case "unpaid":
			wantUnmatched = append(wantUnmatched, r.id)
		}
	}
	for _, tx := range slices.Concat(b.csvTxs, b.ofxTxs) {
		c := wantCat[tx.category]
		c[0]++
		if tx.cents > 0 {
			c[1] += tx.cents
			wantIn += tx.cents
			if !strings.Contains(tx.desc, "BOLETO NN") && !strings.Contains(tx.desc, "TED RECEBIDA 341") &&
				!(strings.HasPrefix(tx.desc, "PIX RECEBIDO") && !strings.Contains(tx.desc, "AVULSO")) {
				wantUnexpected++
				wantUnexpectedCents += tx.cents
			}
		} else {
			c[2] -= tx.cents
			wantOut -= tx.cents
		}
		wantCat[tx.category] = c
	}

	// The reconciliation file.
	data, ok := sink.fileNamed("conciliacao.csv")
	if !ok {
		t.Fatalf("no conciliacao.csv among %v", sink.order)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("conciliacao.csv: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var exact, late int
	var unmatched []string
	var unexpected int
	var unexpectedCents, lateDiff int64
	for _, r := range rows[1:] {
		switch r[col["status"]] {
		case "matched":
			if r[col["kind"]] == "exact" {
				exact++
				if r[col["amount_cents"]] != r[col["credit_cents"]] {
					t.Errorf("exact match with different amounts: %v", r)
				}
			} else {
				late++
				d, _ := strconv.ParseInt(r[col["difference_cents"]], 10, 64)
				lateDiff += d
			}
		case "unmatched":
			unmatched = append(unmatched, r[col["receivable_id"]])
		case "unexpected_credit":
			unexpected++
			c, _ := strconv.ParseInt(r[col["credit_cents"]], 10, 64)
			unexpectedCents += c
		}
	}
	if exact != wantMatchedExact || late != wantMatchedLate {
		t.Errorf("matched %d exact + %d within tolerance, want %d + %d", exact, late, wantMatchedExact, wantMatchedLate)
	}
	if !slices.Equal(unmatched, wantUnmatched) {
		t.Errorf("unmatched = %v, want %v", unmatched, wantUnmatched)
	}
	if unexpected != wantUnexpected || unexpectedCents != wantUnexpectedCents {
		t.Errorf("unexpected credits = %d (%d cents), want %d (%d cents)", unexpected, unexpectedCents, wantUnexpected, wantUnexpectedCents)
	}
	var wantLateDiff int64
	for _, r := range b.receivables {
		if r.fate == "late" {
			wantLateDiff += r.cents*102/100 - r.cents
		}
	}
	if lateDiff != wantLateDiff {
		t.Errorf("late fees = %d cents, want %d", lateDiff, wantLateDiff)
	}

	// The summary file: totals per category in centavos.
	data, ok = sink.fileNamed("summary.json")
	if !ok {
		t.Fatalf("no summary.json among %v", sink.order)
	}
	var sum summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if sum.Transactions != 320 || sum.InflowCents != wantIn || sum.OutflowCents != wantOut || sum.NetCents != wantIn-wantOut {
		t.Errorf("summary totals = %d txs, in %d, out %d, net %d; want 320, %d, %d, %d",
			sum.Transactions, sum.InflowCents, sum.OutflowCents, sum.NetCents, wantIn, wantOut, wantIn-wantOut)
	}
	if len(sum.ByCategory) != len(wantCat) {
		t.Errorf("%d categories, want %d: %+v", len(sum.ByCategory), len(wantCat), sum.ByCategory)
	}
	for _, c := range sum.ByCategory {
		w := wantCat[c.Category]
		if int64(c.Count) != w[0] || c.InflowCents != w[1] || c.OutflowCents != w[2] {
			t.Errorf("category %s = %d, in %d, out %d; want %d, %d, %d", c.Category, c.Count, c.InflowCents, c.OutflowCents, w[0], w[1], w[2])
		}
	}
	if r := sum.Reconciliation; r == nil || r.Counts.Matched != wantMatchedExact+wantMatchedLate || r.Counts.Unmatched != len(wantUnmatched) {
		t.Errorf("summary reconciliation = %+v", sum.Reconciliation)
	}

	// The output: summary text in Portuguese, both files, structured data.
	if !strings.Contains(out.Output.Summary, "320 lançamentos de 01/03/2026") ||
		!strings.Contains(out.Output.Summary, fmt.Sprintf("%d de 46 recebíveis conciliados", wantMatchedExact+wantMatchedLate)) {
		t.Errorf("summary text = %q", out.Output.Summary)
	}
	if len(out.Output.FileIDs) != 2 {
		t.Errorf("FileIDs = %v, want 2", out.Output.FileIDs)
	}
	var od outputData
	if err := json.Unmarshal(out.Output.Data, &od); err != nil {
		t.Fatalf("Output.Data: %v", err)
	}
	if od.Statement == nil || od.Statement.Transactions != 320 || len(od.Statement.Sources) != 2 ||
		od.Statement.Sources[0].Skipped < 5 || od.Statement.Sources[1].Account != "0341/67890-1" {
		t.Errorf("Output.Data.statement = %+v", od.Statement)
	}
	if od.Reconciliation == nil || len(od.Reconciliation.UnmatchedReceivables) != len(wantUnmatched) {
		t.Errorf("Output.Data.reconciliation = %+v", od.Reconciliation)
	}
	if out.State != nil || out.Pending != nil || out.Failure != nil {
		t.Errorf("finished outcome carries state %s, pending %+v, failure %+v", out.State, out.Pending, out.Failure)
	}
}

func BenchmarkBuiltinReconciliation(b *testing.B) {
	data := generateBankData(b)
	job := &Job{
		Playbook: json.RawMessage(reconciliationPlaybook),
		Input:    json.RawMessage(`{"receivables_file_id": "file_rec"}`),
		Files: []InputFile{
			memFileInput("file_csv", "extrato.csv", "text/csv", data.csv),
			memFileInput("file_ofx", "extrato.ofx", "application/x-ofx", data.ofx),
			memFileInput("file_rec", "recebiveis.csv", "text/csv", data.receivablesCSV),
		},
	}
	r := NewBuiltinRunner(nil)
	for b.Loop() {
		if out, err := r.Run(context.Background(), job, newMemSink()); err != nil || out.Status != StatusSucceeded {
			b.Fatalf("Run() = %+v, %v", out, err)
		}
	}
}
