package docs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck resolves references against a small repository on disk,
// listed by walking it (no git there).
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/reference/mcp.md", "# MCP\n\n## Order of checks\n")
	write("core/mcp/RATIONALE.md", "# why\n")
	write("config/kadu.yaml", "a: 1\n")
	write("sdk/ABI.md", "# ABI\n\n## 9. Input required\n")
	write("sdk/c/kadu.h", "/* sdk/ABI.md §9 */\n/* ABI §12 */\n")
	write("bin/kadu.md", "# built, not in the repository\n")
	write("core/mcp/doc.go", strings.Join([]string{
		"// docs/reference/mcp.md#order-of-checks and RATIONALE.md: fine",
		"// docs/reference/mcp.md#order-of-check: no such heading",
		"// docs/reference/auth.md: no such file",
		"// SPEC" + " §6: outside",
		"// bin/kadu.md: not listed",
	}, "\n"))
	write("docs/guide.md", strings.Join([]string{
		"[ok](reference/mcp.md#order-of-checks) [dir](../config) [yaml](/config/kadu.yaml) [self](#guide)",
		"[gone](reference/limits.md) [up](../../outside.md) [anchor](#nope)",
		"# Guide",
	}, "\n"))

	repo, err := OpenRepository(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"core/mcp/doc.go": {
			"core/mcp/doc.go:2: \"docs/reference/mcp.md#order-of-check\": docs/reference/mcp.md has no heading with anchor #order-of-check",
			"core/mcp/doc.go:3: docs/reference/auth.md names a document that does not exist",
			"core/mcp/doc.go:4: \"SPEC" + " §\" cites a document that is not in the repository",
			"core/mcp/doc.go:5: bin/kadu.md names a document that does not exist",
		},
		"sdk/c/kadu.h": {
			"sdk/c/kadu.h:2: sdk/ABI.md §12: sdk/ABI.md has no section 12",
		},
		"docs/guide.md": {
			"docs/guide.md:2: link \"reference/limits.md\": docs/reference/limits.md does not exist",
			"docs/guide.md:2: link \"../../outside.md\" leaves the repository",
			"docs/guide.md:2: \"#nope\": docs/guide.md has no heading with anchor #nope",
		},
	}
	for file, prefixes := range want {
		problems, err := repo.Check(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != len(prefixes) {
			t.Errorf("%s: %d problems, want %d: %v", file, len(problems), len(prefixes), problems)
			continue
		}
		for i, p := range problems {
			if !strings.HasPrefix(p.String(), prefixes[i]) {
				t.Errorf("problem %d = %q, want it to start with %q", i, p, prefixes[i])
			}
		}
	}
}
