package config

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The package doc says only core/app and the kadu command read the
// configuration; everything else is given the values it needs (core/api and
// core/jobs take plans from core/plans, bundles take their limits from
// core/plugin/bundleconf). This keeps it so.
func TestOnlyTheAppImportsConfig(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	allowed := []string{"core/app", "core/cmd/kadu", "core/config"}
	const self = modulePath + "/core/config"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if slices.Contains(allowed, filepath.ToSlash(rel)) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // not ours to judge (build-tagged fixtures, generated files)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports core/config; only %v may (pass it the values it needs)", filepath.ToSlash(rel), allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
