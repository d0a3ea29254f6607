package categorize

// Default returns the built-in rules, in the order they are tried. The order
// matters: fees and taxes come before the transfer kinds, because "TARIFA PIX"
// is a fee and "IOF S/ TED" a tax.
func Default() []Rule {
	return []Rule{
		{Category: "tarifas_bancarias", Keywords: []string{"TARIFA*", "TAR", "CESTA", "PACOTE SERV*", "MENSALIDADE PACOTE", "ANUIDADE"}, Direction: Debit},
		{Category: "impostos", Keywords: []string{"IOF", "DARF", "GPS", "DAS", "SIMPLES NACIONAL", "ISS", "ISSQN", "IPTU", "IPVA", "ICMS", "FGTS", "INSS", "GRU", "TRIBUTO*", "IMPOSTO*"}, Direction: Debit},
		{Category: "juros_encargos", Keywords: []string{"JUROS", "MORA", "ENCARGO*", "MULTA", "CHEQUE ESPECIAL", "LIS"}, Direction: Debit},
		{Category: "estornos", Keywords: []string{"ESTORNO*", "DEVOLUCAO*", "DEVOL"}},
		{Category: "salarios_recebidos", Keywords: []string{"SALARIO*", "PROVENTO*", "FOLHA", "PAGTO SALARIO"}, Direction: Credit},
		{Category: "folha_pagamento", Keywords: []string{"SALARIO*", "FOLHA", "PROVENTO*", "PAG FUNC*", "RESCISAO", "FERIAS", "13O"}, Direction: Debit},
		{Category: "rendimentos", Keywords: []string{"RENDIMENTO*", "REND", "JUROS", "RESGATE*", "DIVIDENDO*", "CDB", "POUPANCA"}, Direction: Credit},
		{Category: "aplicacoes", Keywords: []string{"APLICACAO*", "APLIC", "CDB", "POUPANCA", "INVEST*"}, Direction: Debit},
		{Category: "boletos_recebidos", Keywords: []string{"BOLETO*", "LIQUIDACAO*", "LIQ", "COBRANCA*", "TITULO*"}, Direction: Credit},
		{Category: "boletos_pagos", Keywords: []string{"BOLETO*", "PAGTO TITULO*", "PAG TITULO*", "PAGAMENTO TITULO*", "PAG BOLETO", "PAGTO COBRANCA", "TITULO*"}, Direction: Debit},
		{Category: "contas_consumo", Keywords: []string{"ENERGIA", "LUZ", "AGUA", "SABESP", "CEMIG", "ENEL", "COPEL", "LIGHT", "CEDAE", "COMGAS", "TELEFONE*", "VIVO", "CLARO", "TIM", "OI", "INTERNET", "CONCESSIONARIA*"}, Direction: Debit},
		{Category: "pix_recebidos", Keywords: []string{"PIX"}, Direction: Credit},
		{Category: "pix_enviados", Keywords: []string{"PIX"}, Direction: Debit},
		{Category: "transferencias_recebidas", Keywords: []string{"TED", "DOC", "TEF", "TRANSF*", "CREDITO EM CONTA", "DEPOSITO*", "DEP"}, Direction: Credit},
		{Category: "transferencias_enviadas", Keywords: []string{"TED", "DOC", "TEF", "TRANSF*"}, Direction: Debit},
		{Category: "cartao", Keywords: []string{"CARTAO", "COMPRA*", "DEBITO VISA", "VISA ELECTRON", "MAESTRO", "ELO", "MASTERCARD", "FATURA"}, Direction: Debit},
		{Category: "saques", Keywords: []string{"SAQUE*", "SAQ"}, Direction: Debit},
		{Category: "vendas_cartao", Keywords: []string{"CIELO", "REDE", "GETNET", "STONE", "PAGSEGURO", "ANTECIPACAO*", "VENDAS*"}, Direction: Credit},
	}
}

// DefaultCategory is given to transactions no rule matches.
const DefaultCategory = "outros"
