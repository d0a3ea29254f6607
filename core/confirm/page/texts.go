package page

import (
	"fmt"
	"time"
)

// text is every sentence of the pages in one language. Fields are filled
// for both languages (TestTextsComplete); those ending in F are formats
// whose %s the handlers fill.
type text struct {
	Tagline  string
	Language string // the switch link's label, in its own language

	// The pending approval.
	ApproveTitle string
	Badge        string
	Intro        string
	RequestedBy  string
	ClientIDF    string
	ReportedF    string
	Unregistered string
	Organisation string
	SignedInAs   string
	Action       string
	Expires      string
	Arguments    string
	ArgumentsFor string
	Warning      string
	Continue     string
	Cancel       string
	NotYou       string
	ExpiresAtF   string // time, relative
	InMinutesF   string // minutes
	InAMinute    string

	// Outcomes.
	DoneTitle        string
	DoneLeadF        string // title
	FailedTitle      string
	FailedLeadF      string // title
	RunningTitle     string
	RunningLeadF     string // title
	CancelledTitle   string
	CancelledLead    string
	ApprovedEarlier  string
	FailedEarlier    string
	CancelledEarlier string
	Result           string
	ResultNote       string
	FullResult       string
	ReturnToClient   string

	// Notices.
	NotFoundTitle       string
	NotFoundTextF       string // organisation
	NotFoundAnonText    string
	RefusedTitle        string
	RefusedTextF        string // subject
	ExpiredTitle        string
	ExpiredText         string
	SignInFailedTitle   string
	SignInDeclined      string
	SignInRefusedF      string // OAuth error code
	SignInLost          string
	SessionExpiredTitle string
	SessionExpiredText  string
	FormInvalidTitle    string
	FormInvalidText     string
	CrossSiteTitle      string
	CrossSiteText       string
	UnavailableTitle    string
	UnavailableText     string
	ErrorTitle          string
	ErrorText           string
	BadFormTitle        string
	BadFormText         string

	// Actions on notices.
	SignInAgain string
	SignInOther string
	OpenAgain   string
}

// texts holds each language's sentences. Never mutated.
var texts = map[lang]*text{
	langEN: {
		Tagline:  "Kadu, the Kobana financial agent",
		Language: "English",

		ApproveTitle: "Confirm this action",
		Badge:        "Your approval is needed",
		Intro:        "An AI client asked Kadu to do this on your behalf:",
		RequestedBy:  "Requested by",
		ClientIDF:    "client ID %s",
		ReportedF:    "calls itself “%s”, as reported by the client",
		Unregistered: "A client this server does not know by name",
		Organisation: "Organisation",
		SignedInAs:   "Signed in as",
		Action:       "Action",
		Expires:      "Expires",
		Arguments:    "Arguments, as the client sent them",
		ArgumentsFor: "Technical details",
		Warning:      "Continue only if you asked for this. Kadu will do it once, as you, right now. Cancel does nothing.",
		Continue:     "Continue",
		Cancel:       "Cancel",
		NotYou:       "Not you? Sign in as someone else",
		ExpiresAtF:   "at %s (%s)",
		InMinutesF:   "in %s min",
		InAMinute:    "in less than a minute",

		DoneTitle:        "Done",
		DoneLeadF:        "Kadu did “%s”.",
		FailedTitle:      "It did not work",
		FailedLeadF:      "Kadu tried to do “%s”, and it failed.",
		RunningTitle:     "Approved",
		RunningLeadF:     "Kadu is doing “%s” now. Reload this page in a moment to see the result.",
		CancelledTitle:   "Cancelled",
		CancelledLead:    "Cancelled, nothing was done.",
		ApprovedEarlier:  "This request was already approved; it will not run again.",
		FailedEarlier:    "This request was already approved, and it failed; it will not run again.",
		CancelledEarlier: "This request was already cancelled. Nothing was done.",
		Result:           "Result",
		ResultNote:       "Data returned by the operation, shown as it came.",
		FullResult:       "Full result",
		ReturnToClient:   "You can close this page and return to your AI client: it can read this result with kadu_approvals_get.",

		NotFoundTitle:       "Approval not found",
		NotFoundTextF:       "This link is unknown, or it belongs to another organisation than the one you signed in to (%s). Check the link, or sign in again choosing the right organisation. Nothing was done.",
		NotFoundAnonText:    "This link is not a Kadu approval link. Check that you copied all of it. Nothing was done.",
		RefusedTitle:        "This approval is not yours",
		RefusedTextF:        "Only the person whose AI client asked for this can approve it. You are signed in as %s. Nothing was done.",
		ExpiredTitle:        "This approval has expired",
		ExpiredText:         "Approval links work for a short time only. Nothing was done. Ask your AI client to try again to get a new link.",
		SignInFailedTitle:   "Sign-in did not complete",
		SignInDeclined:      "You declined to sign in. Nothing was done.",
		SignInRefusedF:      "The sign-in service refused the request (%s). Nothing was done.",
		SignInLost:          "This sign-in was started in another window, or took too long. Nothing was done.",
		SessionExpiredTitle: "Your sign-in has expired",
		SessionExpiredText:  "For your safety, a sign-in on this page lasts 15 minutes. Nothing was done. Sign in again to decide.",
		FormInvalidTitle:    "This form is no longer valid",
		FormInvalidText:     "It was opened in another sign-in, or it has expired. Nothing was done. Open the approval again to decide.",
		CrossSiteTitle:      "Request refused",
		CrossSiteText:       "This decision can only be sent from the Kadu approval page itself. Nothing was done.",
		UnavailableTitle:    "Sign-in is unavailable",
		UnavailableText:     "Kadu could not reach the sign-in service. Nothing was done. Try again in a minute.",
		ErrorTitle:          "Something went wrong",
		ErrorText:           "Kadu could not complete this step. Open the approval again in a minute to see where it stands.",
		BadFormTitle:        "The form was incomplete",
		BadFormText:         "Choose Continue or Cancel on the approval page. Nothing was done.",

		SignInAgain: "Sign in again",
		SignInOther: "Sign in as someone else",
		OpenAgain:   "Open the approval again",
	},
	langPT: {
		Tagline:  "Kadu, o agente financeiro da Kobana",
		Language: "Português",

		ApproveTitle: "Confirme esta ação",
		Badge:        "Sua aprovação é necessária",
		Intro:        "Um cliente de IA pediu ao Kadu para fazer isto em seu nome:",
		RequestedBy:  "Solicitado por",
		ClientIDF:    "ID do cliente %s",
		ReportedF:    "identifica-se como “%s”, segundo o próprio cliente",
		Unregistered: "Um cliente que este servidor não conhece pelo nome",
		Organisation: "Organização",
		SignedInAs:   "Conectado como",
		Action:       "Ação",
		Expires:      "Expira",
		Arguments:    "Argumentos, como o cliente os enviou",
		ArgumentsFor: "Detalhes técnicos",
		Warning:      "Continue somente se foi você que pediu isto. O Kadu vai fazer uma única vez, em seu nome, agora. Cancelar não faz nada.",
		Continue:     "Continuar",
		Cancel:       "Cancelar",
		NotYou:       "Não é você? Entre com outra conta",
		ExpiresAtF:   "às %s (%s)",
		InMinutesF:   "em %s min",
		InAMinute:    "em menos de um minuto",

		DoneTitle:        "Pronto",
		DoneLeadF:        "O Kadu fez “%s”.",
		FailedTitle:      "Não deu certo",
		FailedLeadF:      "O Kadu tentou fazer “%s”, e falhou.",
		RunningTitle:     "Aprovado",
		RunningLeadF:     "O Kadu está fazendo “%s” agora. Recarregue esta página daqui a pouco para ver o resultado.",
		CancelledTitle:   "Cancelado",
		CancelledLead:    "Cancelado, nada foi feito.",
		ApprovedEarlier:  "Este pedido já foi aprovado; ele não será executado de novo.",
		FailedEarlier:    "Este pedido já foi aprovado e falhou; ele não será executado de novo.",
		CancelledEarlier: "Este pedido já foi cancelado. Nada foi feito.",
		Result:           "Resultado",
		ResultNote:       "Dados retornados pela operação, exibidos como vieram.",
		FullResult:       "Resultado completo",
		ReturnToClient:   "Você pode fechar esta página e voltar ao seu cliente de IA: ele pode ler este resultado com kadu_approvals_get.",

		NotFoundTitle:       "Aprovação não encontrada",
		NotFoundTextF:       "Este link é desconhecido ou pertence a outra organização, não àquela em que você entrou (%s). Confira o link ou entre novamente escolhendo a organização certa. Nada foi feito.",
		NotFoundAnonText:    "Este não é um link de aprovação do Kadu. Confira se você copiou o link inteiro. Nada foi feito.",
		RefusedTitle:        "Esta aprovação não é sua",
		RefusedTextF:        "Só a pessoa cujo cliente de IA fez o pedido pode aprová-lo. Você entrou como %s. Nada foi feito.",
		ExpiredTitle:        "Esta aprovação expirou",
		ExpiredText:         "Links de aprovação valem por pouco tempo. Nada foi feito. Peça ao seu cliente de IA para tentar de novo e gerar um novo link.",
		SignInFailedTitle:   "O login não foi concluído",
		SignInDeclined:      "Você recusou o login. Nada foi feito.",
		SignInRefusedF:      "O serviço de login recusou o pedido (%s). Nada foi feito.",
		SignInLost:          "Este login foi iniciado em outra janela ou demorou demais. Nada foi feito.",
		SessionExpiredTitle: "Seu login expirou",
		SessionExpiredText:  "Por segurança, um login nesta página dura 15 minutos. Nada foi feito. Entre novamente para decidir.",
		FormInvalidTitle:    "Este formulário não é mais válido",
		FormInvalidText:     "Ele foi aberto em outro login ou expirou. Nada foi feito. Abra a aprovação novamente para decidir.",
		CrossSiteTitle:      "Pedido recusado",
		CrossSiteText:       "Esta decisão só pode ser enviada pela própria página de aprovação do Kadu. Nada foi feito.",
		UnavailableTitle:    "Login indisponível",
		UnavailableText:     "O Kadu não conseguiu falar com o serviço de login. Nada foi feito. Tente novamente em um minuto.",
		ErrorTitle:          "Algo deu errado",
		ErrorText:           "O Kadu não conseguiu concluir esta etapa. Abra a aprovação novamente em um minuto para ver como ela está.",
		BadFormTitle:        "O formulário veio incompleto",
		BadFormText:         "Escolha Continuar ou Cancelar na página de aprovação. Nada foi feito.",

		SignInAgain: "Entrar novamente",
		SignInOther: "Entrar com outra conta",
		OpenAgain:   "Abrir a aprovação novamente",
	},
}

// other is the language the switch link offers.
func (l lang) other() lang {
	if l == langPT {
		return langEN
	}
	return langPT
}

// expiry says when an approval expires, e.g. "at 14:05 UTC (in 12 min)".
func (t *text) expiry(at, now time.Time) string {
	left := at.Sub(now)
	rel := t.InAMinute
	if left >= time.Minute {
		rel = fmt.Sprintf(t.InMinutesF, fmt.Sprint(int(left/time.Minute)))
	}
	return fmt.Sprintf(t.ExpiresAtF, at.UTC().Format("15:04 UTC"), rel)
}
