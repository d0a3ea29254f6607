package app

import (
	"fmt"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// BenchmarkToolCall measures one tools/call as a client sees it: loopback
// HTTP, token verification, the ladder, the inputSchema, a first-party
// bundle instance, the in-process API and the store, on both databases.
// read is kadu_tasks_get; write is kadu_tasks_update (one task version per
// call).
//
//	go test -run '^$' -bench ToolCall -benchtime 300x ./core/app
func BenchmarkToolCall(b *testing.B) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		b.Run(driver, func(b *testing.B) {
			srv := startToolsProduct(b, driver)
			token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_tools_bench", Role: "admin"})
			if err != nil {
				b.Fatal(err)
			}
			rest := restClient{t: b, base: srv.baseURL, token: token}
			status, _, task := rest.do("POST", "/tasks", summaryTaskJSON("Bench"))
			if status != 201 {
				b.Fatalf("POST /tasks: %d %v", status, task)
			}
			id := task["id"].(string)
			cases := []struct{ name, tool, args string }{
				{"read", "kadu_tasks_get", fmt.Sprintf(`{"id":%q}`, id)},
				{"write", "kadu_tasks_update", fmt.Sprintf(`{"id":%q,"description":"Resumo do extrato, medido."}`, id)},
			}
			for _, bc := range cases {
				b.Run(bc.name, func(b *testing.B) {
					params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, bc.tool, bc.args)
					for b.Loop() {
						status, res := mcpCall(b, srv, token, "tools/call", bc.tool, params)
						result, _ := res["result"].(map[string]any)
						if status != 200 || result == nil || result["isError"] == true {
							b.Fatalf("%s: %d %v", bc.tool, status, res)
						}
					}
				})
			}
		})
	}
}
