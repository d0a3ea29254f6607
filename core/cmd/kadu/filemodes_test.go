package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeFilesPrivate starts the real binary on embedded defaults in a
// data directory that already exists (0755, as an operator's mkdir leaves
// it), uploads a file to the local blob storage, and checks that every
// file kadu wrote there — database, WAL, keys, the blob and its attributes
// — is readable by its owner only.
func TestServeFilesPrivate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a server")
	}
	bin := buildKadu(t)
	dataDir := t.TempDir()
	if err := os.Chmod(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: error\n"+noBundles)
	env := append(os.Environ(), "KADU_DATA_DIR="+dataDir, "KADU_PUBLIC_URL=http://"+addr)
	serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr, "--admin-addr", freeAddr(t))

	tok := exec.Command(bin, "token", "--config", cfgFile, "--addr", addr, "--org", "org_modes", "--role", "member")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	token := strings.TrimSpace(string(out))

	content := "data;valor\n2026-03-01;10,00\n"
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/files",
		strings.NewReader(fmt.Sprintf(`{"filename":"extrato.csv","content_type":"text/csv","size_bytes":%d}`, len(content))))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Upload struct {
			URL     string            `json:"url"`
			Method  string            `json:"method"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || json.Unmarshal(body, &created) != nil || created.Upload.URL == "" {
		t.Fatalf("POST /files: %d %s", res.StatusCode, body)
	}
	put, _ := http.NewRequest(created.Upload.Method, created.Upload.URL, strings.NewReader(content))
	for k, v := range created.Upload.Headers {
		put.Header.Set(k, v)
	}
	res, err = http.DefaultClient.Do(put)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("upload: %d %s", res.StatusCode, body)
	}

	var files []string
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if p != dataDir && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v; want no access for group or others", strings.TrimPrefix(p, dataDir), fi.Mode().Perm())
		}
		if d.Type().IsRegular() {
			files = append(files, strings.TrimPrefix(p, dataDir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blobs := 0
	for _, f := range files {
		if strings.Contains(f, "blobs") {
			blobs++
		}
	}
	if blobs == 0 || !strings.Contains(strings.Join(files, " "), "kadu.db-wal") {
		t.Fatalf("files in the data directory: %v; want the database, its WAL and the uploaded blob", files)
	}
}
