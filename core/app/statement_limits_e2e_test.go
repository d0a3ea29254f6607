package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// TestHostileStatementEndToEnd uploads a 10 MiB CSV built to make the
// parser amplify memory (a header, then 10 M separators on one line: it
// cost 3.5 GiB before the parser streamed) and runs a statement task on it
// over real HTTP: the execution fails with invalid_input and the
// line-numbered error, the server allocates a small multiple of the file
// doing so, and it keeps serving: an inline hostile statement fails the
// same way through the "Resumo de extrato" example, and the example's own
// input still succeeds.
func TestHostileStatementEndToEnd(t *testing.T) {
	srv := startServerWith(t, false, func(c *config.Config) { useDriver(t, c, config.DriverSQLite) })
	tok, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_hostile"})
	if err != nil {
		t.Fatal(err)
	}
	c := restClient{t: t, base: srv.baseURL, token: tok}

	// The largest file the plan accepts.
	const header = "Data;Historico;Valor\n"
	content := []byte(header + strings.Repeat(";", 10<<20-len(header)))
	sum := sha256.Sum256(content)
	status, _, f := c.do("POST", "/files", fmt.Sprintf(`{"filename":"bomba.csv","content_type":"text/csv","size_bytes":%d,"sha256":%q}`, len(content), hex.EncodeToString(sum[:])))
	if status != 201 {
		t.Fatalf("POST /files: %d %v", status, f)
	}
	up := f["upload"].(map[string]any)
	h, _ := up["headers"].(map[string]any)
	if status, body := upload(t, "PUT", up["url"].(string), h, content, nil); status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	id := f["file"].(map[string]any)["id"].(string)
	if status, _, conf := c.do("POST", "/files/"+id+"/confirm", ""); status != 200 {
		t.Fatalf("confirm: %d %v", status, conf)
	}
	task := `{"name":"Resumo do arquivo","description":"d","instructions":"i","playbook":{"version":1,"steps":[
		{"id":"extrato","type":"parse_statement","params":{"source":{"file_index":0},"format":"csv"}},
		{"id":"resumo","type":"summarize","params":{"language":"pt-BR"}}]}}`
	status, _, tk := c.do("POST", "/tasks", task)
	if status != 201 {
		t.Fatalf("create task: %d %v", status, tk)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run, _ := json.Marshal(map[string]any{"input_file_ids": []string{id}})
	status, _, exe := c.do("POST", "/tasks/"+tk["id"].(string)+"/run", string(run))
	if status != 202 {
		t.Fatalf("run: %d %v", status, exe)
	}
	done := c.waitExecution(exe["id"].(string))
	runtime.ReadMemStats(&after)
	wantMsg := `step "extrato": bomba.csv: line 2: 10485739 bytes in one line (limit 65536)`
	failure, _ := done["failure"].(map[string]any)
	if done["status"] != "failed" || failure["code"] != "invalid_input" || failure["message"] != wantMsg {
		t.Fatalf("execution %v %v; want failed invalid_input %q", done["status"], failure, wantMsg)
	}
	// The whole process (server and test client) while the execution ran.
	if n := after.TotalAlloc - before.TotalAlloc; n > 3*uint64(len(content)) {
		t.Errorf("the server allocated %d MiB running on a %d MiB file, want at most 3× the file", n>>20, len(content)>>20)
	} else {
		t.Logf("the server allocated %d KiB running on a %d MiB file", n>>10, len(content)>>20)
	}

	// Still serving: an inline hostile statement fails the same way…
	exampleID, example := c.findTask("Resumo de extrato")
	inline, _ := json.Marshal(map[string]any{"input": map[string]any{"statement_csv": "Data;Histórico;Valor\n05/01/2026;PIX;1,00\n" + strings.Repeat(";", 300) + "\n"}})
	status, _, exe = c.do("POST", "/tasks/"+exampleID+"/run", string(inline))
	if status != 202 {
		t.Fatalf("run inline: %d %v", status, exe)
	}
	done = c.waitExecution(exe["id"].(string))
	failure, _ = done["failure"].(map[string]any)
	wantMsg = `step "extrato": /input/statement_csv: line 3: 301 fields (limit 256)`
	if done["status"] != "failed" || failure["code"] != "invalid_input" || failure["message"] != wantMsg {
		t.Fatalf("inline execution %v %v; want failed invalid_input %q", done["status"], failure, wantMsg)
	}
	// …and the example's own statement still runs to the end.
	body, _ := json.Marshal(map[string]any{"input": example})
	status, _, exe = c.do("POST", "/tasks/"+exampleID+"/run", string(body))
	if status != 202 {
		t.Fatalf("run example: %d %v", status, exe)
	}
	if done = c.waitExecution(exe["id"].(string)); done["status"] != "succeeded" {
		t.Fatalf("example after the hostile file: %v %v", done["status"], done["failure"])
	}
}
