package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// statementCSV is a small bank statement the built-in runner can parse.
const statementCSV = "Data;Lançamento;Documento;Valor (R$);Saldo (R$)\n" +
	"02/03/2026;SALDO ANTERIOR;;;15.230,45\n" +
	"02/03/2026;PIX RECEBIDO ACME COMERCIO LTDA;E0001;1.500,00;16.730,45\n" +
	"02/03/2026;TARIFA PACOTE SERVICOS;;-39,90;16.690,55\n" +
	"03/03/2026;PAGTO TITULO ENEL ENERGIA;;-412,37;16.278,18\n"

// upload sends body to a signed upload URL as the registration said.
func upload(t *testing.T, method, url string, headers map[string]any, body []byte, mutate func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, fmt.Sprint(v))
	}
	if mutate != nil {
		mutate(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// TestFilesEndToEnd registers a file, PUTs it to the signed URL the server
// serves itself, confirms it, runs a task on it and downloads both the
// input and the execution's output, byte for byte, over real HTTP on both
// databases; and checks that each kind of bad upload is refused on its own.
func TestFilesEndToEnd(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			srv := startServerWith(t, false, func(c *config.Config) { useDriver(t, c, driver) })
			mint := func(org string) restClient {
				tok, err := MintDevToken(srv.cfg, TokenOptions{OrgID: org})
				if err != nil {
					t.Fatal(err)
				}
				return restClient{t: t, base: srv.baseURL, token: tok}
			}
			c, other := mint("org_files"), mint("org_other")

			content := []byte(statementCSV)
			sum := sha256.Sum256(content)
			register := func(size int) (id, url string, headers map[string]any) {
				t.Helper()
				body := fmt.Sprintf(`{"filename":"extrato.csv","content_type":"text/csv","size_bytes":%d,"sha256":%q}`, size, hex.EncodeToString(sum[:]))
				status, _, f := c.do("POST", "/files", body)
				if status != 201 {
					t.Fatalf("POST /files: %d %v", status, f)
				}
				up := f["upload"].(map[string]any)
				if up["method"] != "PUT" {
					t.Fatalf("upload method %v", up["method"])
				}
				h, _ := up["headers"].(map[string]any)
				return f["file"].(map[string]any)["id"].(string), up["url"].(string), h
			}

			// Refusals, each on a fresh registration.
			_, url, h := register(len(content))
			refusals := []struct {
				name   string
				method string
				url    string
				body   []byte
				mutate func(*http.Request)
				want   int
				code   string
			}{
				{"tampered signature", "PUT", tamper(url), content, nil, 403, "signature_invalid"},
				{"wrong method", "POST", url, content, nil, 405, ""},
				{"wrong content type", "PUT", url, content, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "content_type_mismatch"},
				{"longer than declared", "PUT", url, append(bytes.Clone(content), 'x'), nil, 413, "size_mismatch"},
			}
			for _, r := range refusals {
				status, body := upload(t, r.method, r.url, h, r.body, r.mutate)
				if status != r.want || !strings.Contains(body, r.code) {
					t.Errorf("%s: %d %s, want %d %s", r.name, status, body, r.want, r.code)
				}
			}
			// Over the plan's size limit: refused at registration.
			status, _, big := c.do("POST", "/files", `{"filename":"big.csv","content_type":"text/csv","size_bytes":10485761}`)
			if status != 422 || !strings.Contains(fmt.Sprint(big), "size_bytes") {
				t.Errorf("oversize registration: %d %v", status, big)
			}

			// The round trip.
			id, url, h := register(len(content))
			if status, body := upload(t, "PUT", url, h, content, nil); status != 200 {
				t.Fatalf("PUT: %d %s", status, body)
			}
			status, _, f := c.do("POST", "/files/"+id+"/confirm", "")
			if status != 200 || f["status"] != "ready" {
				t.Fatalf("confirm: %d %v", status, f)
			}
			if got := download(t, c, id); !bytes.Equal(got, content) {
				t.Fatalf("downloaded %q, want %q", got, content)
			}
			// Another organisation sees nothing.
			for _, path := range []string{"/files/" + id, "/files/" + id + "/download"} {
				if status, _, _ := other.do("GET", path, ""); status != 404 {
					t.Errorf("other org GET %s: %d, want 404", path, status)
				}
			}
			if status, _, _ := other.do("POST", "/files/"+id+"/confirm", ""); status != 404 {
				t.Errorf("other org confirm: %d, want 404", status)
			}

			// A task that reads the file and writes an output file.
			task := `{"name":"Extrato por arquivo","description":"d","instructions":"i","playbook":{"version":1,"steps":[
				{"id":"ler","type":"parse_statement","params":{"source":{"file_index":0},"format":"csv"}},
				{"id":"cat","type":"categorize"},
				{"id":"out","type":"write_output","params":{"content":"transactions","format":"csv","filename":"lancamentos.csv"}}]}}`
			status, _, tk := c.do("POST", "/tasks", task)
			if status != 201 {
				t.Fatalf("create task: %d %v", status, tk)
			}
			run, _ := json.Marshal(map[string]any{"input_file_ids": []string{id}})
			status, _, exe := c.do("POST", "/tasks/"+tk["id"].(string)+"/run", string(run))
			if status != 202 {
				t.Fatalf("run: %d %v", status, exe)
			}
			done := c.waitExecution(exe["id"].(string))
			if done["status"] != "succeeded" {
				t.Fatalf("execution %v: %v", done["status"], done["failure"])
			}
			outIDs := done["output"].(map[string]any)["file_ids"].([]any)
			if len(outIDs) != 1 {
				t.Fatalf("output files %v", outIDs)
			}
			outID := outIDs[0].(string)
			status, _, of := c.do("GET", "/files/"+outID, "")
			if status != 200 || of["purpose"] != "output" || of["status"] != "ready" || of["execution_id"] != exe["id"] {
				t.Fatalf("output file: %d %v", status, of)
			}
			got := download(t, c, outID)
			if !strings.Contains(string(got), "PIX RECEBIDO ACME") || int64(len(got)) != int64(of["size_bytes"].(float64)) {
				t.Errorf("output file content %q (size %v)", got, of["size_bytes"])
			}
			if s := sha256.Sum256(got); hex.EncodeToString(s[:]) != of["sha256"] {
				t.Errorf("output sha256 %v does not match its bytes", of["sha256"])
			}
		})
	}
}

// download fetches a file through its short-lived download URL.
func download(t *testing.T, c restClient, id string) []byte {
	t.Helper()
	status, _, d := c.do("GET", "/files/"+id+"/download", "")
	if status != 200 {
		t.Fatalf("download URL: %d %v", status, d)
	}
	res, err := http.Get(d["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET download: %d %q %s", res.StatusCode, res.Header.Get("Content-Disposition"), body)
	}
	return body
}

// tamper changes the last character of a signed URL (its signature).
func tamper(url string) string {
	last := url[len(url)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return url[:len(url)-1] + string(repl)
}
