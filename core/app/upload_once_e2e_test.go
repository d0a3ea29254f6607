package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// TestUploadURLStoresOnce reproduces the replaced-upload attack over the
// real server on both databases: a file is uploaded and confirmed ready,
// then its upload URL (still within its 15 minutes) receives other
// content. The PUT must be refused with 409 upload_already_completed and
// what downloads must still be what was confirmed. Concurrent PUTs to a
// pending file store exactly one body, and a rejected file's URL stays
// closed.
func TestUploadURLStoresOnce(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			srv := startServerWith(t, false, func(c *config.Config) { useDriver(t, c, driver) })
			tok, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_upload_once"})
			if err != nil {
				t.Fatal(err)
			}
			c := restClient{t: t, base: srv.baseURL, token: tok}
			register := func(size int, sha string) (id, url string, headers map[string]any) {
				t.Helper()
				body := fmt.Sprintf(`{"filename":"extrato.csv","content_type":"text/csv","size_bytes":%d}`, size)
				if sha != "" {
					body = fmt.Sprintf(`{"filename":"extrato.csv","content_type":"text/csv","size_bytes":%d,"sha256":%q}`, size, sha)
				}
				status, _, f := c.do("POST", "/files", body)
				if status != 201 {
					t.Fatalf("POST /files: %d %v", status, f)
				}
				up := f["upload"].(map[string]any)
				h, _ := up["headers"].(map[string]any)
				return f["file"].(map[string]any)["id"].(string), up["url"].(string), h
			}
			confirm := func(id, want string) map[string]any {
				t.Helper()
				status, _, f := c.do("POST", "/files/"+id+"/confirm", "")
				if status != 200 || f["status"] != want {
					t.Fatalf("confirm %s: %d %v; want 200 %s", id, status, f, want)
				}
				return f
			}
			hexSum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
			good := []byte(statementCSV)
			evil := bytes.ToUpper(good) // same size, other bytes
			if len(evil) != len(good) || bytes.Equal(evil, good) {
				t.Fatal("test data: evil must differ from good at the same size")
			}

			t.Run("ready file", func(t *testing.T) {
				// No sha256 declared: only the server's measurement protects it.
				id, url, h := register(len(good), "")
				if status, body := upload(t, "PUT", url, h, good, nil); status != 200 {
					t.Fatalf("PUT: %d %s", status, body)
				}
				ready := confirm(id, "ready")
				if ready["sha256"] != hexSum(good) {
					t.Fatalf("ready sha256 %v, want %s", ready["sha256"], hexSum(good))
				}
				status, body := upload(t, "PUT", url, h, evil, nil)
				if status != 409 || !strings.Contains(body, `"code":"upload_already_completed"`) {
					t.Fatalf("PUT after ready: %d %s; want 409 upload_already_completed", status, body)
				}
				if got := download(t, c, id); hexSum(got) != hexSum(good) {
					t.Fatalf("downloaded content hashes to %s after a refused PUT, want the confirmed %s", hexSum(got), hexSum(good))
				}
				if _, _, f := c.do("GET", "/files/"+id, ""); f["status"] != "ready" || f["sha256"] != hexSum(good) {
					t.Fatalf("file after the refused PUT: %v", f)
				}
			})

			t.Run("concurrent PUTs to a pending file", func(t *testing.T) {
				id, url, h := register(len(good), "")
				bodies := [][]byte{good, evil, bytes.ToLower(good), bytes.Repeat([]byte("x"), len(good))}
				statuses := make([]int, len(bodies))
				texts := make([]string, len(bodies))
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range bodies {
					wg.Go(func() {
						<-start
						statuses[i], texts[i] = upload(t, "PUT", url, h, bodies[i], nil)
					})
				}
				close(start)
				wg.Wait()
				winner := -1
				for i, s := range statuses {
					switch {
					case s == 200 && winner < 0:
						winner = i
					case s == 200:
						t.Fatalf("PUTs %d and %d were both stored", winner, i)
					case s != 409:
						t.Fatalf("PUT %d: %d %s; want 200 or 409", i, s, texts[i])
					}
				}
				if winner < 0 {
					t.Fatalf("no PUT stored: %v", texts)
				}
				ready := confirm(id, "ready")
				if ready["sha256"] != hexSum(bodies[winner]) {
					t.Fatalf("ready sha256 %v, want the 200 PUT's %s", ready["sha256"], hexSum(bodies[winner]))
				}
				if got := download(t, c, id); !bytes.Equal(got, bodies[winner]) {
					t.Fatal("downloaded content is not the body of the PUT that got 200")
				}
			})

			t.Run("rejected file", func(t *testing.T) {
				id, url, h := register(len(good), hexSum(good))
				if status, body := upload(t, "PUT", url, h, evil, nil); status != 200 {
					t.Fatalf("PUT: %d %s", status, body)
				}
				confirm(id, "rejected")
				status, body := upload(t, "PUT", url, h, good, nil)
				if status != 409 || !strings.Contains(body, `"code":"upload_already_completed"`) {
					t.Fatalf("PUT after rejection: %d %s; want 409 upload_already_completed", status, body)
				}
				confirm(id, "rejected")
			})
		})
	}
}
