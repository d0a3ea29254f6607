package confirm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kobana/kadu/core/store"
)

// Describe says in plain words what a call of the tool (its name and
// title) with args will do, for the person who must confirm it: in
// Portuguese when lang is "pt" (or "pt-BR", …), in English otherwise.
// The destructive tools of docs/reference/bundles.md#tool-catalogue get a sentence of their own naming
// the arguments that matter ("Run task tsk_… with 2 input files."); any
// other tool gets its title and its arguments listed. Ids are shown as
// they are: Explain also names what they point to. Argument values are
// shortened and stripped of line breaks, so that they cannot pass for the
// sentence around them.
func Describe(tool, title string, args json.RawMessage, lang string) string {
	return describe(tool, title, args, nil, isPortuguese(lang))
}

// Explain is Describe with the ids in args looked up in the approval's (or
// the caller's) organisation: tasks by name and cost cap, files by name,
// webhooks by URL. An id that is not found is shown as it is.
func (c *Confirmer) Explain(ctx context.Context, a store.Approval, lang string) string {
	return c.explain(ctx, a.OrgID, a.Tool, a.ToolTitle, a.Arguments, lang)
}

func (c *Confirmer) explain(ctx context.Context, orgID, tool, title string, args json.RawMessage, lang string) string {
	return describe(tool, title, args, c.lookup(ctx, orgID, tool, parseArgs(args)), isPortuguese(lang))
}

func isPortuguese(lang string) bool {
	l := strings.ToLower(lang)
	return l == "pt" || strings.HasPrefix(l, "pt-") || strings.HasPrefix(l, "pt_")
}

// ref is what the store knows about an id in the arguments.
type ref struct {
	label        string // task or file name, webhook URL
	maxCostCents int64  // tasks: the cap of one run; 0 unknown
	taskID       string // executions: their task
	webhookID    string // deliveries: their webhook
	eventCode    string // deliveries: their event
}

// facts maps ids to what the store knows about them; nil knows nothing.
type facts map[string]ref

func (f facts) get(id string) ref { return f[id] }

// lookup resolves the ids a description of tool mentions. Lookup errors
// leave the id unresolved: a description never fails.
func (c *Confirmer) lookup(ctx context.Context, orgID, tool string, a args) facts {
	f := facts{}
	var resolve func(id string)
	resolve = func(id string) {
		if _, done := f[id]; done || id == "" {
			return
		}
		var r ref
		switch {
		case strings.HasPrefix(id, store.PrefixTask):
			if t, err := c.db.GetTask(ctx, orgID, id); err == nil {
				r = ref{label: t.Name, maxCostCents: t.MaxCostCents}
			}
		case strings.HasPrefix(id, store.PrefixExecution):
			if e, err := c.db.GetExecution(ctx, orgID, id); err == nil {
				r = ref{taskID: e.TaskID}
			}
		case strings.HasPrefix(id, store.PrefixFile):
			if fl, err := c.db.GetFile(ctx, orgID, id); err == nil {
				r = ref{label: fl.Filename}
			}
		case strings.HasPrefix(id, store.PrefixWebhook):
			if w, err := c.db.GetWebhook(ctx, orgID, id); err == nil {
				r = ref{label: w.URL}
			}
		case strings.HasPrefix(id, store.PrefixDelivery):
			if d, err := c.db.GetDelivery(ctx, orgID, id); err == nil {
				r = ref{webhookID: d.WebhookID, eventCode: d.EventCode}
			}
		}
		f[id] = r
		if r.taskID != "" {
			resolve(r.taskID)
		}
		if r.webhookID != "" {
			resolve(r.webhookID)
		}
	}
	if !slices.Contains(describedTools, tool) {
		return f
	}
	resolve(a.str("id"))
	for _, d := range a.objects("destinations") {
		resolve(d.str("webhook_id"))
	}
	return f
}

// describedTools are the tools with a sentence of their own (docs/reference/bundles.md#tool-catalogue,
// the destructive ones).
var describedTools = []string{
	"kadu_tasks_run", "kadu_tasks_delete", "kadu_tasks_set_launch_policy", "kadu_tasks_set_destinations",
	"kadu_executions_continue", "kadu_executions_cancel", "kadu_executions_delete",
	"kadu_files_delete",
	"kadu_webhooks_create", "kadu_webhooks_update", "kadu_webhooks_delete", "kadu_webhooks_rotate_secret",
	"kadu_webhook_deliveries_replay",
}

// words builds a sentence in the reader's language.
type words struct {
	pt bool
	f  facts
}

// say picks the English or the Portuguese wording.
func (w words) say(en, pt string) string {
	if w.pt {
		return pt
	}
	return en
}

// taskName is a task's name in asterisks, or its id when unknown.
func (w words) taskName(id string) string {
	if name := w.f.get(id).label; name != "" {
		return "*" + clean(name, 80) + "*"
	}
	return clean(id, 80)
}

// execTail names an execution's task, when known: " of task *X*".
func (w words) execTail(id string) string {
	if t := w.f.get(id).taskID; t != "" && w.f.get(t).label != "" {
		return w.say(" of task ", " da tarefa ") + w.taskName(t)
	}
	return ""
}

func (w words) webhook(id string) string {
	if u := w.f.get(id).label; u != "" {
		return "webhook " + clean(u, 120)
	}
	return "webhook " + clean(id, 80)
}

func (w words) file(id string) string {
	if name := w.f.get(id).label; name != "" {
		return w.say("file ", "o arquivo ") + "*" + clean(name, 80) + "* (" + clean(id, 80) + ")"
	}
	return w.say("file ", "o arquivo ") + clean(id, 80)
}

// describe writes the sentence for tool; f may be nil.
func describe(tool, title string, raw json.RawMessage, f facts, pt bool) string {
	w := words{pt: pt, f: f}
	a := parseArgs(raw)
	id := a.str("id")
	switch tool {
	case "kadu_tasks_run":
		var with []string
		if in := inline(a.raw("input")); in != "" {
			with = append(with, w.say("input (", "a entrada (")+in+")")
		}
		if n := len(a.strs("input_file_ids")); n > 0 {
			with = append(with, plural(n, w.say("input file", "arquivo de entrada"), w.say("input files", "arquivos de entrada")))
		}
		s := w.say("Run task ", "Executar a tarefa ") + w.taskName(id)
		if len(with) > 0 {
			s += w.say(" with ", " com ") + strings.Join(with, w.say(" and ", " e "))
		}
		if cost := w.f.get(id).maxCostCents; cost > 0 {
			s += w.say("; it may cost up to ", "; pode custar até ") + BRL(cost)
		}
		return s + "."
	case "kadu_tasks_delete":
		return w.say("Delete task ", "Excluir a tarefa ") + w.taskName(id) +
			w.say(": it disappears from lists and can no longer be run.", ": ela some das listas e não pode mais ser executada.")
	case "kadu_tasks_set_launch_policy":
		roles, users := a.strs("roles"), a.strs("user_ids")
		always := w.say(" (admins and owners always may).", " (administradores e proprietários sempre podem).")
		if len(roles) == 0 && len(users) == 0 {
			return w.say("Let every member run task ", "Permitir que todos os membros executem a tarefa ") + w.taskName(id) + always
		}
		var who []string
		if len(roles) > 0 {
			who = append(who, w.say("members with role ", "membros com o papel ")+list(roles, w.say(" or ", " ou ")))
		}
		if len(users) > 0 {
			who = append(who, w.say("the users ", "os usuários ")+list(users, w.say(" and ", " e ")))
		}
		return w.say("Let only ", "Permitir que apenas ") + strings.Join(who, w.say(" and ", " e ")) +
			w.say(" run task ", " executem a tarefa ") + w.taskName(id) + always
	case "kadu_tasks_set_destinations":
		var hooks []string
		for _, d := range a.objects("destinations") {
			hooks = append(hooks, w.webhook(d.str("webhook_id")))
		}
		if len(hooks) == 0 {
			return w.say("Stop sending the results of task ", "Parar de enviar os resultados da tarefa ") + w.taskName(id) +
				w.say(" to any webhook.", " a qualquer webhook.")
		}
		return w.say("Send the results of task ", "Enviar os resultados da tarefa ") + w.taskName(id) + w.say(" to ", " para ") +
			list(hooks, w.say(" and ", " e ")) + w.say(", and nowhere else.", ", e para nenhum outro lugar.")
	case "kadu_executions_continue":
		return w.say("Answer execution ", "Responder à execução ") + clean(id, 80) + w.execTail(id) + w.say(" with the answer (", " com a resposta (") + inline(a.raw("answer")) + ")" +
			w.say("; it then runs again and may cost more.", "; ela volta a rodar e pode custar mais.")
	case "kadu_executions_cancel":
		return w.say("Cancel execution ", "Cancelar a execução ") + clean(id, 80) + w.execTail(id) + w.say(": it stops and cannot be resumed.", ": ela para e não pode ser retomada.")
	case "kadu_executions_delete":
		return w.say("Delete execution ", "Excluir a execução ") + clean(id, 80) + w.execTail(id) + w.say(": it disappears from lists.", ": ela some das listas.")
	case "kadu_files_delete":
		return w.say("Delete ", "Excluir ") + w.file(id) + "."
	case "kadu_webhooks_create":
		return w.say("Create a webhook that sends the events ", "Criar um webhook que envia os eventos ") +
			list(a.strs("event_codes"), ", ") + w.say(" of the organisation to ", " da organização para ") + clean(a.str("url"), 120) + "."
	case "kadu_webhooks_update":
		return w.say("Change ", "Alterar o ") + w.webhook(id) + ": " + strings.Join(w.webhookChanges(a), "; ") + "."
	case "kadu_webhooks_delete":
		return w.say("Delete ", "Excluir o ") + w.webhook(id) +
			w.say(" and cancel its pending deliveries.", " e cancelar as entregas pendentes.")
	case "kadu_webhooks_rotate_secret":
		overlap := int64(86400)
		if n, ok := a.int("overlap_seconds"); ok {
			overlap = n
		}
		s := w.say("Make a new signing secret for ", "Criar um novo segredo de assinatura para o ") + w.webhook(id)
		if overlap == 0 {
			return s + w.say("; the old one stops working now.", "; o antigo deixa de valer agora.")
		}
		return s + w.say("; the old one keeps signing for ", "; o antigo continua assinando por ") + w.duration(overlap) + "."
	case "kadu_webhook_deliveries_replay":
		d := w.f.get(id)
		s := w.say("Send delivery ", "Enviar mais uma vez a entrega ") + clean(id, 80)
		if d.eventCode != "" {
			s += w.say(" (event ", " (evento ") + clean(d.eventCode, 80) + ")"
		}
		if d.webhookID != "" {
			s += w.say(" to ", " ao ") + w.webhook(d.webhookID)
		}
		return s + w.say(" once more.", ".")
	}
	return w.generic(title, tool, a)
}

func (w words) webhookChanges(a args) []string {
	var out []string
	if u := a.str("url"); u != "" {
		out = append(out, w.say("send to ", "enviar para ")+clean(u, 120))
	}
	if codes := a.strs("event_codes"); len(codes) > 0 {
		out = append(out, w.say("events ", "eventos ")+list(codes, ", "))
	}
	if _, ok := a["description"]; ok {
		out = append(out, w.say("description ", "descrição ")+strconv.Quote(clean(a.str("description"), 80)))
	}
	if b, ok := a.bool("enabled"); ok {
		if b {
			out = append(out, w.say("resume its deliveries", "retomar as entregas"))
		} else {
			out = append(out, w.say("stop its deliveries", "parar as entregas"))
		}
	}
	if len(out) == 0 {
		out = append(out, w.say("nothing", "nada"))
	}
	return out
}

func (w words) duration(s int64) string {
	units := []struct {
		secs     int64
		en, pt   string
		ens, pts string
	}{
		{86400, "day", "dia", "days", "dias"},
		{3600, "hour", "hora", "hours", "horas"},
		{60, "minute", "minuto", "minutes", "minutos"},
		{1, "second", "segundo", "seconds", "segundos"},
	}
	for _, u := range units {
		if s%u.secs == 0 {
			return plural(int(s/u.secs), w.say(u.en, u.pt), w.say(u.ens, u.pts))
		}
	}
	return ""
}

// generic lists a call's arguments: for tools without a sentence of their
// own, partner bundles' included.
func (w words) generic(title, tool string, a args) string {
	name := title
	if name == "" {
		name = tool
	}
	s := w.say("Run ", "Executar ") + "*" + clean(name, 80) + "*"
	keys := make([]string, 0, len(a))
	for k := range a {
		if k != "idempotency_key" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	const maxShown = 10
	var parts []string
	for i, k := range keys {
		if i == maxShown {
			parts = append(parts, w.say(fmt.Sprintf("and %d more", len(keys)-maxShown), fmt.Sprintf("e mais %d", len(keys)-maxShown)))
			break
		}
		parts = append(parts, clean(k, 40)+": "+a.display(k))
	}
	if len(parts) > 0 {
		s += w.say(" with ", " com ") + strings.Join(parts, ", ")
	}
	return s + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// list joins items, the last two with last ("a, b and c").
func list(items []string, last string) string {
	cleaned := make([]string, len(items))
	for i, it := range items {
		cleaned[i] = clean(it, 120)
	}
	if len(cleaned) <= 1 {
		return strings.Join(cleaned, "")
	}
	if last == ", " {
		return strings.Join(cleaned, ", ")
	}
	return strings.Join(cleaned[:len(cleaned)-1], ", ") + last + cleaned[len(cleaned)-1]
}

// clean makes a value safe to quote in a sentence: no control characters
// or line breaks, at most max runes (an ellipsis marks a cut).
func clean(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// BRL formats centavos as Brazilian reais: 500 → "R$ 5,00",
// 123456789 → "R$ 1.234.567,89", -150 → "-R$ 1,50".
func BRL(cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign, u = "-", uint64(-(cents+1))+1 // no overflow at math.MinInt64
	}
	whole := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(d)
	}
	return fmt.Sprintf("%sR$ %s,%02d", sign, b.String(), u%100)
}

// args are a call's arguments, member by member; nil when they are not an
// object.
type args map[string]json.RawMessage

func parseArgs(raw json.RawMessage) args {
	var a args
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return a
}

func (a args) raw(k string) json.RawMessage { return a[k] }

// compact renders raw JSON without insignificant whitespace.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func (a args) str(k string) string {
	var s string
	if json.Unmarshal(a[k], &s) != nil {
		return ""
	}
	return s
}

func (a args) strs(k string) []string {
	var s []string
	if json.Unmarshal(a[k], &s) != nil {
		return nil
	}
	return s
}

func (a args) int(k string) (int64, bool) {
	var n int64
	if json.Unmarshal(a[k], &n) != nil {
		return 0, false
	}
	return n, true
}

func (a args) bool(k string) (bool, bool) {
	var b bool
	if len(a[k]) == 0 || json.Unmarshal(a[k], &b) != nil {
		return false, false
	}
	return b, true
}

func (a args) objects(k string) []args {
	var out []args
	if json.Unmarshal(a[k], &out) != nil {
		return nil
	}
	return out
}

// inline renders a JSON object as "key: value, …" in key order, with
// values as display shows them; "" for an empty or absent object.
// Anything else is shown as compact JSON.
func inline(raw json.RawMessage) string {
	obj := parseArgs(raw)
	if obj == nil {
		if c := compact(raw); c != "null" {
			return clean(c, 120)
		}
		return ""
	}
	keys := slices.Sorted(maps.Keys(obj))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, clean(k, 40)+": "+obj.display(k))
	}
	return clean(strings.Join(parts, ", "), 200)
}

// display renders one argument's value: strings as they are, anything
// else as compact JSON, shortened.
func (a args) display(k string) string {
	var s string
	if json.Unmarshal(a[k], &s) == nil {
		return clean(s, 80)
	}
	return clean(compact(a[k]), 80)
}
