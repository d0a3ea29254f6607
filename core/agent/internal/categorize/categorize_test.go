package categorize

import (
	"strings"
	"testing"
)

func TestDefaultRules(t *testing.T) {
	def, err := Compile(Default())
	if err != nil {
		t.Fatalf("Compile(Default()) = %v", err)
	}
	tests := []struct {
		desc  string
		cents int64
		want  string
	}{
		{"PIX RECEBIDO - JOAO DA SILVA", 10000, "pix_recebidos"},
		{"Pix enviado Maria", -5000, "pix_enviados"},
		{"TARIFA PIX", -150, "tarifas_bancarias"},
		{"Tar. pacote serviços", -4590, "tarifas_bancarias"},
		{"IOF S/ SALDO DEVEDOR", -123, "impostos"},
		{"TED RECEBIDA 341 0001", 50000, "transferencias_recebidas"},
		{"TED ENVIADA", -50000, "transferencias_enviadas"},
		{"LIQUIDACAO BOLETO 1234", 25000, "boletos_recebidos"},
		{"PAGTO TITULO BANCO 001", -25000, "boletos_pagos"},
		{"Salário Janeiro", 500000, "salarios_recebidos"},
		{"FOLHA PAGAMENTO", -900000, "folha_pagamento"},
		{"RENDIMENTO POUPANCA", 321, "rendimentos"},
		{"ESTORNO COMPRA", 1000, "estornos"},
		{"SAQUE 24H", -20000, "saques"},
		{"CONTA DE ENERGIA ENEL", -30000, "contas_consumo"},
		{"TEDESCO COMERCIO", -100, ""},
		{"ALGO QUALQUER", 100, ""},
	}
	for _, tt := range tests {
		got, ok := def.Category(tt.desc, tt.cents)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Category(%q, %d) = %q, %v; want %q", tt.desc, tt.cents, got, ok, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	_, err := Compile([]Rule{
		{Category: "", Keywords: []string{"X"}},
		{Category: "a", Keywords: nil},
		{Category: "b", Keywords: []string{"  "}},
		{Category: "c", Keywords: []string{"X"}, Direction: "sideways"},
	})
	if err == nil {
		t.Fatal("Compile accepted bad rules")
	}
	for _, want := range []string{"rules[0].category", "rules[1].keywords", "rules[2].keywords[0]", "rules[3].direction"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestCustomRulesFirst(t *testing.T) {
	custom, err := Compile([]Rule{{Category: "aluguel", Keywords: []string{"IMOBILIARIA"}}, {Category: "cliente_acme", Keywords: []string{"PIX ACME"}}})
	if err != nil {
		t.Fatal(err)
	}
	def, _ := Compile(Default())
	r := custom.Then(def)
	if got, _ := r.Category("PIX ACME LTDA", 100); got != "cliente_acme" {
		t.Errorf("custom rule not first: %q", got)
	}
	if got, _ := r.Category("PIX OUTRO", 100); got != "pix_recebidos" {
		t.Errorf("defaults not applied after custom rules: %q", got)
	}
}
