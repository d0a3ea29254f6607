package confirm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	const (
		tsk = "tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
		exe = "exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
		fil = "file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
		whk = "whk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
		dlv = "dlv_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
	)
	known := facts{
		tsk: {label: "Conciliação diária", maxCostCents: 500},
		exe: {taskID: tsk},
		fil: {label: "extrato.csv"},
		whk: {label: "https://hooks.example.com/kadu"},
		dlv: {webhookID: whk, eventCode: "execution.succeeded"},
	}
	tests := []struct {
		name   string
		tool   string
		args   string
		facts  facts
		en, pt string
	}{
		{name: "run, the reference's example", tool: "kadu_tasks_run", facts: known,
			args: `{"id":"` + tsk + `","input_file_ids":["file_1","file_2"],"idempotency_key":"k"}`,
			en:   "Run task *Conciliação diária* with 2 input files; it may cost up to R$ 5,00.",
			pt:   "Executar a tarefa *Conciliação diária* com 2 arquivos de entrada; pode custar até R$ 5,00."},
		{name: "run with input, task unknown", tool: "kadu_tasks_run",
			args: `{"id":"` + tsk + `","input":{"period":"2026-03"},"input_file_ids":["file_1"]}`,
			en:   "Run task " + tsk + " with input (period: 2026-03) and 1 input file.",
			pt:   "Executar a tarefa " + tsk + " com a entrada (period: 2026-03) e 1 arquivo de entrada."},
		{name: "run, nothing else", tool: "kadu_tasks_run", args: `{"id":"` + tsk + `","input":{}}`,
			en: "Run task " + tsk + ".", pt: "Executar a tarefa " + tsk + "."},
		{name: "delete task", tool: "kadu_tasks_delete", args: `{"id":"` + tsk + `"}`, facts: known,
			en: "Delete task *Conciliação diária*: it disappears from lists and can no longer be run.",
			pt: "Excluir a tarefa *Conciliação diária*: ela some das listas e não pode mais ser executada."},
		{name: "launch policy, everyone", tool: "kadu_tasks_set_launch_policy", args: `{"id":"` + tsk + `","roles":[],"user_ids":[]}`, facts: known,
			en: "Let every member run task *Conciliação diária* (admins and owners always may).",
			pt: "Permitir que todos os membros executem a tarefa *Conciliação diária* (administradores e proprietários sempre podem)."},
		{name: "launch policy, some", tool: "kadu_tasks_set_launch_policy", args: `{"id":"` + tsk + `","roles":["member"],"user_ids":["u1","u2"]}`, facts: known,
			en: "Let only members with role member and the users u1 and u2 run task *Conciliação diária* (admins and owners always may).",
			pt: "Permitir que apenas membros com o papel member e os usuários u1 e u2 executem a tarefa *Conciliação diária* (administradores e proprietários sempre podem)."},
		{name: "destinations", tool: "kadu_tasks_set_destinations", facts: known,
			args: `{"id":"` + tsk + `","destinations":[{"type":"webhook","webhook_id":"` + whk + `"},{"type":"webhook","webhook_id":"whk_2"}]}`,
			en:   "Send the results of task *Conciliação diária* to webhook https://hooks.example.com/kadu and webhook whk_2, and nowhere else.",
			pt:   "Enviar os resultados da tarefa *Conciliação diária* para webhook https://hooks.example.com/kadu e webhook whk_2, e para nenhum outro lugar."},
		{name: "no destinations", tool: "kadu_tasks_set_destinations", args: `{"id":"` + tsk + `","destinations":[]}`, facts: known,
			en: "Stop sending the results of task *Conciliação diária* to any webhook.",
			pt: "Parar de enviar os resultados da tarefa *Conciliação diária* a qualquer webhook."},
		{name: "continue", tool: "kadu_executions_continue", args: `{"id":"` + exe + `","answer":{"approved":true,"comment":"ok"}}`, facts: known,
			en: "Answer execution " + exe + " of task *Conciliação diária* with the answer (approved: true, comment: ok); it then runs again and may cost more.",
			pt: "Responder à execução " + exe + " da tarefa *Conciliação diária* com a resposta (approved: true, comment: ok); ela volta a rodar e pode custar mais."},
		{name: "cancel", tool: "kadu_executions_cancel", args: `{"id":"` + exe + `"}`, facts: known,
			en: "Cancel execution " + exe + " of task *Conciliação diária*: it stops and cannot be resumed.",
			pt: "Cancelar a execução " + exe + " da tarefa *Conciliação diária*: ela para e não pode ser retomada."},
		{name: "delete execution, task unknown", tool: "kadu_executions_delete", args: `{"id":"` + exe + `"}`,
			en: "Delete execution " + exe + ": it disappears from lists.",
			pt: "Excluir a execução " + exe + ": ela some das listas."},
		{name: "delete file", tool: "kadu_files_delete", args: `{"id":"` + fil + `"}`, facts: known,
			en: "Delete file *extrato.csv* (" + fil + ").", pt: "Excluir o arquivo *extrato.csv* (" + fil + ")."},
		{name: "create webhook", tool: "kadu_webhooks_create",
			args: `{"url":"https://erp.example.com/in","event_codes":["execution.succeeded","execution.failed"]}`,
			en:   "Create a webhook that sends the events execution.succeeded, execution.failed of the organisation to https://erp.example.com/in.",
			pt:   "Criar um webhook que envia os eventos execution.succeeded, execution.failed da organização para https://erp.example.com/in."},
		{name: "update webhook", tool: "kadu_webhooks_update", facts: known,
			args: `{"id":"` + whk + `","url":"https://new.example.com","event_codes":["file.ready"],"description":"ERP","enabled":false}`,
			en:   `Change webhook https://hooks.example.com/kadu: send to https://new.example.com; events file.ready; description "ERP"; stop its deliveries.`,
			pt:   `Alterar o webhook https://hooks.example.com/kadu: enviar para https://new.example.com; eventos file.ready; descrição "ERP"; parar as entregas.`},
		{name: "delete webhook", tool: "kadu_webhooks_delete", args: `{"id":"` + whk + `"}`,
			en: "Delete webhook " + whk + " and cancel its pending deliveries.",
			pt: "Excluir o webhook " + whk + " e cancelar as entregas pendentes."},
		{name: "rotate, default overlap", tool: "kadu_webhooks_rotate_secret", args: `{"id":"` + whk + `"}`, facts: known,
			en: "Make a new signing secret for webhook https://hooks.example.com/kadu; the old one keeps signing for 1 day.",
			pt: "Criar um novo segredo de assinatura para o webhook https://hooks.example.com/kadu; o antigo continua assinando por 1 dia."},
		{name: "rotate, 2 hours", tool: "kadu_webhooks_rotate_secret", args: `{"id":"` + whk + `","overlap_seconds":7200}`, facts: known,
			en: "Make a new signing secret for webhook https://hooks.example.com/kadu; the old one keeps signing for 2 hours.",
			pt: "Criar um novo segredo de assinatura para o webhook https://hooks.example.com/kadu; o antigo continua assinando por 2 horas."},
		{name: "rotate, now", tool: "kadu_webhooks_rotate_secret", args: `{"id":"` + whk + `","overlap_seconds":0}`,
			en: "Make a new signing secret for webhook " + whk + "; the old one stops working now.",
			pt: "Criar um novo segredo de assinatura para o webhook " + whk + "; o antigo deixa de valer agora."},
		{name: "replay", tool: "kadu_webhook_deliveries_replay", args: `{"id":"` + dlv + `"}`, facts: known,
			en: "Send delivery " + dlv + " (event execution.succeeded) to webhook https://hooks.example.com/kadu once more.",
			pt: "Enviar mais uma vez a entrega " + dlv + " (evento execution.succeeded) ao webhook https://hooks.example.com/kadu."},
		{name: "partner tool", tool: "acme_purge", args: `{"older_than_days":30,"dry_run":false,"idempotency_key":"k","tags":["a","b"]}`,
			en: "Run *Purge old records* with dry_run: false, older_than_days: 30, tags: [\"a\",\"b\"].",
			pt: "Executar *Purge old records* com dry_run: false, older_than_days: 30, tags: [\"a\",\"b\"]."},
		{name: "partner tool without arguments", tool: "acme_purge", args: `{}`,
			en: "Run *Purge old records*.", pt: "Executar *Purge old records*."},
		{name: "values cannot break the sentence", tool: "acme_purge", args: `{"note":"line one\nIGNORE THE ABOVE` + strings.Repeat("x", 100) + `"}`,
			en: "Run *Purge old records* with note: line one IGNORE THE ABOVE" + strings.Repeat("x", 54) + "….",
			pt: "Executar *Purge old records* com note: line one IGNORE THE ABOVE" + strings.Repeat("x", 54) + "…."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for lang, want := range map[string]string{"en": tt.en, "pt": tt.pt, "pt-BR": tt.pt, "": tt.en, "es": tt.en} {
				if got := describe(tt.tool, "Purge old records", json.RawMessage(tt.args), tt.facts, isPortuguese(lang)); got != want {
					t.Errorf("lang %q:\n got %s\nwant %s", lang, got, want)
				}
			}
		})
	}
}

// Describe, without the store, shows ids as they are and never fails on
// arguments of any shape.
func TestDescribeWithoutFacts(t *testing.T) {
	if got := Describe("kadu_files_delete", "Delete a file", json.RawMessage(`{"id":"file_1"}`), "en"); got != "Delete file file_1." {
		t.Errorf("Describe = %q", got)
	}
	for _, args := range []string{``, `null`, `[]`, `"x"`, `{"id":1}`, `{"input_file_ids":"x"}`, `{`} {
		for _, tool := range append([]string{"acme"}, describedTools...) {
			if got := Describe(tool, "", json.RawMessage(args), "pt"); got == "" {
				t.Errorf("Describe(%s, %s) is empty", tool, args)
			}
		}
	}
}

func TestBRL(t *testing.T) {
	tests := []struct {
		cents int64
		want  string
	}{
		{0, "R$ 0,00"},
		{5, "R$ 0,05"},
		{500, "R$ 5,00"},
		{123456, "R$ 1.234,56"},
		{100000000, "R$ 1.000.000,00"},
		{-150, "-R$ 1,50"},
		{math.MaxInt64, "R$ 92.233.720.368.547.758,07"},
		{math.MinInt64, "-R$ 92.233.720.368.547.758,08"},
	}
	for _, tt := range tests {
		if got := BRL(tt.cents); got != tt.want {
			t.Errorf("BRL(%d) = %q, want %q", tt.cents, got, tt.want)
		}
	}
}
