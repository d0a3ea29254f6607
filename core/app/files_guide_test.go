package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// filesGuide is the guide a newcomer follows to run a task on uploaded
// files; TestFilesGuideRuns runs it.
const filesGuide = "../../docs/files-webhooks-limits.md"

// guideParts reads the files (<!-- guide-file: NAME TYPE --> before a
// fenced block) and the script (<!-- guide-script -->) of the guide.
func guideParts(t *testing.T) (files map[string]string, script string) {
	t.Helper()
	raw, err := os.ReadFile(filesGuide)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- (guide-file: ([^ ]+) [^ ]+|guide-script) -->\n```[a-z]*\n(.*?)```\n")
	files = map[string]string{}
	for _, m := range block.FindAllStringSubmatch(string(raw), -1) {
		if m[1] == "guide-script" {
			script = m[3]
		} else {
			files[m[2]] = m[3]
		}
	}
	if len(files) != 2 || script == "" {
		t.Fatalf("%s: want two guide-file blocks and a guide-script block, got files %v and a script of %d bytes", filesGuide, files, len(script))
	}
	return files, script
}

// TestFilesGuideRuns follows the files guide as a newcomer would, over
// real HTTP: its two files saved, its shell script run with bash, curl and
// jq against a real server (only the API URL and the token command
// replaced), uploading both files, finding the example task that reads
// them and running it to succeeded — so the guide cannot rot, and running a
// task on an uploaded file never meets a 422 again.
func TestFilesGuideRuns(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the files guide needs %s (.ci/toolchains installs it): %v", tool, err)
		}
	}
	files, script := guideParts(t)
	srv := startServerWith(t, false, nil)
	token, err := MintDevToken(srv.cfg, TokenOptions{}) // what ./bin/kadu token mints
	if err != nil {
		t.Fatal(err)
	}
	for old, repl := range map[string]string{
		"API=http://127.0.0.1:8080/api/v1\n": "API=" + srv.baseURL + "/api/v1\n",
		"TOKEN=$(./bin/kadu token)\n":        "TOKEN=" + token + "\n",
	} {
		if !strings.Contains(script, old) {
			t.Fatalf("the guide's script no longer has the line %q this test replaces:\n%s", old, script)
		}
		script = strings.Replace(script, old, repl, 1)
	}
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the guide's script failed: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || lines[0] != "succeeded" || lines[1] == "" ||
		lines[2] != `{"matched":3,"unmatched_receivables":1,"unexpected_credits":1}` {
		t.Fatalf("the guide's script printed:\n%s\nwant succeeded, a summary and the counts the guide promises\nstderr:\n%s", &stdout, &stderr)
	}
	if got := stderr.String(); got != "extrato.csv: ready\nrecebiveis.csv: ready\n" {
		t.Errorf("upload progress on stderr = %q, want both files ready", got)
	}

	// The execution the script left in execution.json: both files as
	// input, conciliacao.csv written and downloadable.
	raw, err := os.ReadFile(filepath.Join(dir, "execution.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exe struct {
		InputFileIDs []string `json:"input_file_ids"`
		Output       struct {
			FileIDs []string `json:"file_ids"`
		} `json:"output"`
	}
	if err := json.Unmarshal(raw, &exe); err != nil {
		t.Fatal(err)
	}
	if len(exe.InputFileIDs) != 2 || len(exe.Output.FileIDs) != 1 {
		t.Fatalf("execution: input files %v, output files %v; want 2 and 1", exe.InputFileIDs, exe.Output.FileIDs)
	}
	c := restClient{t: t, base: srv.baseURL, token: token}
	status, _, meta := c.do("GET", "/files/"+exe.Output.FileIDs[0], "")
	if status != 200 || meta["filename"] != "conciliacao.csv" {
		t.Errorf("output file: %d %v, want conciliacao.csv", status, meta)
	}
}
