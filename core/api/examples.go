package api

import (
	"bytes"
	"encoding/json"

	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/store"
)

// The example tasks a newly provisioned organisation receives in the
// embedded setup (Options.ExampleTasks), so that a new user can run
// something meaningful at once: each input_schema carries an example input,
// valid against it, that its playbook (core/agent/PLAYBOOKS.md) runs to the
// end. Everything about them is in this file.

// exampleTasks returns the example tasks, capped at plan's per-execution
// maximum.
func exampleTasks(plan plans.Plan) []store.Task {
	tasks := []store.Task{
		{
			// The one that reads uploaded files (first: created first, it is
			// listed after the others, newest first). The files guide
			// (docs/files-webhooks-limits.md) and the reconcile_statement
			// prompt lead here; exampleFiles are the files its example runs on.
			Name: uploadedReconciliationTask,
			Description: "Concilia um extrato enviado como arquivo (CSV ou OFX) com os recebíveis enviados como arquivo (CSV ou JSON). " +
				"Reconciles an uploaded bank statement with an uploaded receivables file: run it with input_file_ids = " +
				"[statement, receivables], in that order, and an empty input.",
			Instructions: "Leia o extrato do primeiro arquivo (CSV ou OFX) e os recebíveis do segundo (CSV com id, pagador, vencimento e valor, ou JSON), " +
				"categorize os lançamentos, concilie cada recebível com no máximo um crédito (mesmo valor até 3 dias do vencimento; " +
				"diferença de até R$ 1,00 aceita numa segunda passada), resuma em português e gere o arquivo conciliacao.csv.",
			InputSchema: mustJSON(map[string]any{
				"type":                 "object",
				"title":                uploadedReconciliationTask,
				"description":          "Nada a preencher: envie o extrato e os recebíveis em input_file_ids, nessa ordem (POST /files, o upload e POST /files/{id}/confirm).",
				"additionalProperties": false,
				"properties":           map[string]any{},
				"examples":             []any{map[string]any{}},
			}),
			Playbook: json.RawMessage(`{"version":1,"description":"Conciliação de um extrato e de recebíveis enviados como arquivos","steps":[
				{"id":"extrato","type":"parse_statement","title":"Ler o extrato (arquivo 1)","params":{"source":{"file_index":0}}},
				{"id":"categorias","type":"categorize","title":"Categorizar os lançamentos"},
				{"id":"conciliacao","type":"reconcile","title":"Conciliar os recebíveis (arquivo 2)","params":{"receivables":{"file_index":1},"date_window_days":3,"tolerance_cents":100}},
				{"id":"resumo","type":"summarize","title":"Resumir","params":{"language":"pt-BR"}},
				{"id":"arquivo","type":"write_output","title":"Gerar conciliacao.csv","params":{"content":"reconciliation","format":"csv","filename":"conciliacao.csv","separator":";"}}
			]}`),
		},
		{
			Name:        "Conciliação diária",
			Description: "Confere os recebíveis esperados (boletos, faturas) com os créditos do extrato bancário e aponta o que não entrou e o que entrou sem estar previsto.",
			Instructions: "Leia o extrato em CSV, categorize os lançamentos, concilie cada recebível com no máximo um crédito " +
				"(mesmo valor até 3 dias do vencimento; diferença de até R$ 1,00 aceita numa segunda passada), " +
				"resuma em português e gere o arquivo conciliacao.csv.",
			InputSchema: mustJSON(map[string]any{
				"type":                 "object",
				"title":                "Conciliação diária",
				"required":             []string{"statement_csv", "receivables"},
				"additionalProperties": false,
				"properties": map[string]any{
					"statement_csv": map[string]any{
						"type": "string", "minLength": 1,
						"description": "O extrato em CSV, como o banco exporta: data, histórico e valor (ou colunas de crédito e débito).",
					},
					"receivables": receivablesSchema,
				},
				"examples": []any{map[string]any{
					"statement_csv": exampleStatementCSV,
					"receivables":   exampleReceivables,
				}},
			}),
			Playbook: json.RawMessage(`{"version":1,"description":"Conciliação de recebíveis com o extrato","steps":[
				{"id":"extrato","type":"parse_statement","title":"Ler o extrato","params":{"source":{"pointer":"/input/statement_csv"},"format":"csv"}},
				{"id":"categorias","type":"categorize","title":"Categorizar os lançamentos"},
				{"id":"conciliacao","type":"reconcile","title":"Conciliar os recebíveis","params":{"receivables":{"pointer":"/input/receivables"},"date_window_days":3,"tolerance_cents":100}},
				{"id":"resumo","type":"summarize","title":"Resumir","params":{"language":"pt-BR"}},
				{"id":"arquivo","type":"write_output","title":"Gerar conciliacao.csv","params":{"content":"reconciliation","format":"csv","filename":"conciliacao.csv","separator":";"}}
			]}`),
		},
		{
			Name:        "Resumo de extrato",
			Description: "Categoriza os lançamentos de um extrato em CSV (tarifas, impostos, aluguel, PIX, cartão…) e resume entradas, saídas e as maiores categorias de despesa.",
			Instructions: "Leia o extrato, categorize cada lançamento (aluguel e pró-labore com regras próprias, o resto pelas regras padrão), " +
				"resuma em português com as 5 maiores categorias de saída e gere resumo.csv e lancamentos.csv.",
			InputSchema: mustJSON(map[string]any{
				"type":                 "object",
				"title":                "Resumo de extrato",
				"required":             []string{"statement_csv"},
				"additionalProperties": false,
				"properties": map[string]any{
					"statement_csv": map[string]any{
						"type": "string", "minLength": 1,
						"description": "O extrato em CSV, como o banco exporta: data, histórico e valor (ou colunas de crédito e débito).",
					},
				},
				"examples": []any{map[string]any{"statement_csv": exampleMonthCSV}},
			}),
			Playbook: json.RawMessage(`{"version":1,"description":"Resumo categorizado do extrato","steps":[
				{"id":"extrato","type":"parse_statement","title":"Ler o extrato","params":{"source":{"pointer":"/input/statement_csv"},"format":"csv"}},
				{"id":"categorias","type":"categorize","title":"Categorizar os lançamentos","params":{"rules":[
					{"category":"aluguel","keywords":["ALUGUEL","IMOBILIARIA"],"direction":"debit"},
					{"category":"pro_labore","keywords":["PRO LABORE","PROLABORE"],"direction":"debit"}]}},
				{"id":"resumo","type":"summarize","title":"Resumir","params":{"language":"pt-BR","top_categories":5}},
				{"id":"arquivo_resumo","type":"write_output","title":"Gerar resumo.csv","params":{"content":"summary","format":"csv","filename":"resumo.csv","separator":";"}},
				{"id":"arquivo_lancamentos","type":"write_output","title":"Gerar lancamentos.csv","params":{"content":"transactions","format":"csv","filename":"lancamentos.csv","separator":";"}}
			]}`),
		},
		{
			Name:        "Fechamento do mês com aprovação",
			Description: "Pergunta o período, lê um extrato OFX, categoriza e resume os lançamentos do período e pede aprovação antes de gerar o arquivo de lançamentos.",
			Instructions: "Pergunte o período do fechamento, leia o extrato OFX só nesse período, categorize e resuma em português; " +
				"mostre o resumo e peça aprovação antes de gerar fechamento.csv.",
			InputSchema: mustJSON(map[string]any{
				"type":                 "object",
				"title":                "Fechamento do mês com aprovação",
				"required":             []string{"statement_ofx"},
				"additionalProperties": false,
				"properties": map[string]any{
					"statement_ofx": map[string]any{
						"type": "string", "minLength": 1,
						"description": "O extrato em OFX (1.x SGML ou 2.x XML), como o internet banking exporta.",
					},
				},
				"examples": []any{map[string]any{"statement_ofx": exampleOFX}},
			}),
			Playbook: json.RawMessage(`{"version":1,"description":"Fechamento mensal com aprovação","steps":[
				{"id":"periodo","type":"ask","title":"Perguntar o período","params":{"prompt":"Qual período devo fechar? (por exemplo de 2026-03-01 a 2026-03-31)",
					"answer_schema":{"type":"object","properties":{
						"from":{"type":"string","format":"date","title":"De"},
						"to":{"type":"string","format":"date","title":"Até"}},"required":["from","to"]}}},
				{"id":"extrato","type":"parse_statement","title":"Ler o extrato do período","params":{"source":{"pointer":"/input/statement_ofx"},"format":"ofx","period":{"pointer":"/answers/periodo"}}},
				{"id":"categorias","type":"categorize","title":"Categorizar os lançamentos","params":{"rules":[
					{"category":"aluguel","keywords":["ALUGUEL","IMOBILIARIA"],"direction":"debit"}]}},
				{"id":"resumo","type":"summarize","title":"Resumir","params":{"language":"pt-BR"}},
				{"id":"aprovacao","type":"approve","title":"Aprovar o fechamento","params":{"prompt":"Confira o resumo do período. Posso gerar o arquivo fechamento.csv?"}},
				{"id":"arquivo","type":"write_output","title":"Gerar fechamento.csv","params":{"content":"transactions","format":"csv","filename":"fechamento.csv","separator":";"}}
			]}`),
		},
	}
	for i := range tasks {
		var buf bytes.Buffer
		if err := json.Compact(&buf, tasks[i].Playbook); err != nil {
			panic(err) // static data
		}
		tasks[i].Playbook = buf.Bytes()
		tasks[i].MaxCostCents = plan.MaxCostPerExecutionCents
		tasks[i].TimeoutSeconds = DefaultTimeoutSeconds
	}
	return tasks
}

// uploadedReconciliationTask is the name of the example task that reads
// uploaded files.
const uploadedReconciliationTask = "Conciliação de arquivos enviados"

// exampleFile is an input file an example task's example runs on.
type exampleFile struct {
	Name, ContentType, Content string
}

// exampleFiles are the input files of each example task that reads files,
// in input_file_ids order: the same statement and receivables as the
// inline "Conciliação diária", as a bank and a spreadsheet export them.
var exampleFiles = map[string][]exampleFile{
	uploadedReconciliationTask: {
		{Name: "extrato.csv", ContentType: "text/csv", Content: exampleStatementCSV},
		{Name: "recebiveis.csv", ContentType: "text/csv", Content: exampleReceivablesCSV},
	},
}

// exampleReceivablesCSV is exampleReceivables as a spreadsheet exports it.
const exampleReceivablesCSV = `id;pagador;vencimento;valor
F-1001;ACME Comercio Ltda;02/03/2026;1.500,00
F-1002;Beta Servicos;01/03/2026;2.350,00
F-1003;Gama Industria;04/03/2026;980,00
F-1004;Epsilon Ltda;05/03/2026;1.200,00
`

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // static data
	}
	return b
}

var receivablesSchema = map[string]any{
	"type": "array", "minItems": 1, "maxItems": 5000,
	"description": "Os recebíveis esperados no período: boletos, faturas, parcelas.",
	"items": map[string]any{
		"type":                 "object",
		"required":             []string{"id", "payer", "due_date", "amount_cents"},
		"additionalProperties": false,
		"properties": map[string]any{
			"id":           map[string]any{"type": "string", "minLength": 1, "description": "Identificador único (nosso número, número da fatura)."},
			"payer":        map[string]any{"type": "string", "description": "Nome do pagador, como aparece no extrato."},
			"due_date":     map[string]any{"type": "string", "format": "date", "description": "Vencimento, AAAA-MM-DD."},
			"amount_cents": map[string]any{"type": "integer", "minimum": 1, "description": "Valor em centavos (R$ 1.500,00 = 150000)."},
		},
	},
}

// exampleStatementCSV is a few days of a company's current account, as
// Brazilian banks export it.
const exampleStatementCSV = `Data;Lançamento;Documento;Valor (R$);Saldo (R$)
02/03/2026;SALDO ANTERIOR;;;15.230,45
02/03/2026;PIX RECEBIDO ACME COMERCIO LTDA;E0001;1.500,00;16.730,45
02/03/2026;TARIFA PACOTE SERVICOS;;-39,90;16.690,55
03/03/2026;LIQUIDACAO BOLETO BETA SERVICOS;000123;2.350,00;19.040,55
03/03/2026;PAGTO TITULO ENEL ENERGIA;;-412,37;18.628,18
04/03/2026;TED RECEBIDA GAMA INDUSTRIA;;980,50;19.608,68
05/03/2026;PIX RECEBIDO DELTA ME;E0002;300,00;19.908,68
05/03/2026;PIX ENVIADO FORNECEDOR OMEGA;E0003;-1.200,00;18.708,68
`

// exampleReceivables: ACME is paid exactly, Beta two days late, Gama 50
// centavos over (a tolerance match), Epsilon not at all; Delta's PIX is an
// unexpected credit.
var exampleReceivables = []map[string]any{
	{"id": "F-1001", "payer": "ACME Comercio Ltda", "due_date": "2026-03-02", "amount_cents": 150000},
	{"id": "F-1002", "payer": "Beta Servicos", "due_date": "2026-03-01", "amount_cents": 235000},
	{"id": "F-1003", "payer": "Gama Industria", "due_date": "2026-03-04", "amount_cents": 98000},
	{"id": "F-1004", "payer": "Epsilon Ltda", "due_date": "2026-03-05", "amount_cents": 120000},
}

// exampleMonthCSV is half a month of a small business's account, with
// separate credit and debit columns.
const exampleMonthCSV = `Data;Histórico;Docto.;Crédito (R$);Débito (R$);Saldo (R$)
01/04/2026;SALDO ANTERIOR;;;;8.420,10
01/04/2026;RECEBIMENTO CIELO VENDAS CARTAO;;3.215,40;;11.635,50
02/04/2026;PAGTO ALUGUEL IMOBILIARIA CENTRAL;;;4.500,00;7.135,50
03/04/2026;PIX RECEBIDO MARIA SOUZA;;850,00;;7.985,50
05/04/2026;DAS SIMPLES NACIONAL;;;1.137,22;6.848,28
07/04/2026;CONTA VIVO EMPRESAS;;;289,90;6.558,38
08/04/2026;TARIFA TED;;;12,50;6.545,88
10/04/2026;PRO LABORE SOCIOS;;;2.800,00;3.745,88
12/04/2026;LIQUIDACAO BOLETO CLIENTE ALFA;;1.980,00;;5.725,88
14/04/2026;COMPRA CARTAO PAPELARIA CENTRO;;;154,30;5.571,58
15/04/2026;PIX ENVIADO JOAO CONTADOR;;;650,00;4.921,58
`

// exampleOFX is a month of a current account in OFX 1.02 (SGML).
const exampleOFX = `OFXHEADER:100
DATA:OFXSGML
VERSION:102
SECURITY:NONE
ENCODING:USASCII
CHARSET:1252
COMPRESSION:NONE
OLDFILEUID:NONE
NEWFILEUID:NONE

<OFX>
<SIGNONMSGSRSV1>
<SONRS>
<STATUS>
<CODE>0
<SEVERITY>INFO
</STATUS>
<DTSERVER>20260401120000[-3:BRT]
<LANGUAGE>POR
</SONRS>
</SIGNONMSGSRSV1>
<BANKMSGSRSV1>
<STMTTRNRS>
<TRNUID>1001
<STATUS>
<CODE>0
<SEVERITY>INFO
</STATUS>
<STMTRS>
<CURDEF>BRL
<BANKACCTFROM>
<BANKID>0001
<ACCTID>12345-6
<ACCTTYPE>CHECKING
</BANKACCTFROM>
<BANKTRANLIST>
<DTSTART>20260301000000[-3:BRT]
<DTEND>20260402000000[-3:BRT]
<STMTTRN>
<TRNTYPE>CREDIT
<DTPOSTED>20260302000000[-3:BRT]
<TRNAMT>4500.00
<FITID>202603020001
<MEMO>PIX RECEBIDO CLIENTE ALFA LTDA
</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20260305000000[-3:BRT]
<TRNAMT>-3200.00
<FITID>202603050001
<MEMO>PAGTO ALUGUEL IMOBILIARIA CENTRAL
</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20260310000000[-3:BRT]
<TRNAMT>-45.90
<FITID>202603100001
<MEMO>TARIFA PACOTE SERVICOS
</STMTTRN>
<STMTTRN>
<TRNTYPE>CREDIT
<DTPOSTED>20260315000000[-3:BRT]
<TRNAMT>2750.00
<FITID>202603150001
<MEMO>LIQUIDACAO BOLETO CLIENTE BETA
</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20260320000000[-3:BRT]
<TRNAMT>-980.45
<FITID>202603200001
<MEMO>DAS SIMPLES NACIONAL
</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20260325000000[-3:BRT]
<TRNAMT>-1500.00
<FITID>202603250001
<MEMO>PIX ENVIADO FORNECEDOR GAMA
</STMTTRN>
<STMTTRN>
<TRNTYPE>CREDIT
<DTPOSTED>20260402000000[-3:BRT]
<TRNAMT>1200.00
<FITID>202604020001
<MEMO>TED RECEBIDA CLIENTE DELTA
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL>
<BALAMT>12345.67
<DTASOF>20260402000000[-3:BRT]
</LEDGERBAL>
</STMTRS>
</STMTTRNRS>
</BANKMSGSRSV1>
</OFX>
`
