package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
)

// A file with mistakes of every kind — unknown keys, values that do not
// decode, values that break a rule, a bundle configured wrong — is
// reported in one error, each mistake with the file and line it is on, and
// the environment's with its variable.
func TestLoadReportsEveryMistakeAtOnce(t *testing.T) {
	t.Parallel()
	path := writeYAML(t, `adress: 127.0.0.1:8080
log:
  level: loud
http:
  read_timeout: 30
plans:
  gold:
    webhooks: 3
plugins:
  bundles:
    mine:
      enabled: true
      path: /tmp/mine.wasm
      sha256: abc
      routes: ["GET /nope"]
      memory_mib: -1
      isolation: shared
`)
	_, err := load(path, true, serveFlags(t), environ("KADU_LOG__FORMAT=xml", "KADU_AUTH__REQUIRE_AT_JWT=maybe"))
	if err == nil {
		t.Fatal("load accepted a file full of mistakes")
	}
	t.Logf("error:\n%v", err)
	for _, tt := range []struct{ key, source, msg string }{
		{"adress", path + ":1", `unknown key (did you mean "addr"?)`},
		{"log.level", path + ":3", `"loud" is not allowed`},
		{"http.read_timeout", path + ":5", "30 is not a duration"},
		{"plans.gold.retention", path + ":7", "is 0 or not set"},
		{"plugins.bundles.mine.sha256", path + ":14", "64 hex digits"},
		{"plugins.bundles.mine.routes", path + ":15", `"GET /nope", is not a route`},
		{"plugins.bundles.mine.memory_mib", path + ":16", "-1 is negative"},
		{"plugins.bundles.mine.isolation", path + ":17", `"shared" is not allowed`},
		{"log.format", "env KADU_LOG__FORMAT", `"xml" is not allowed`},
		{"auth.require_at_jwt", "env KADU_AUTH__REQUIRE_AT_JWT", "not a boolean"},
	} {
		want := tt.key + " (" + tt.source + "): "
		line := lineWith(err.Error(), want)
		if line == "" {
			t.Errorf("no line starting %q", want)
			continue
		}
		if !strings.Contains(line, tt.msg) {
			t.Errorf("%s: %q, want it to say %q", tt.key, line, tt.msg)
		}
	}
	var ke *KeyError
	if !errors.As(err, &ke) {
		t.Errorf("errors.As(*KeyError) failed on %v", err)
	}
}

// A value that does not decode is reported once, by its decoding problem,
// not again by a rule checked against the value it kept.
func TestLoadDoesNotReportAKeyTwice(t *testing.T) {
	t.Parallel()
	_, err := load(writeYAML(t, "plugins:\n  memory_budget_mib: lots\n"), true, nil, environ())
	if err == nil {
		t.Fatal("load accepted memory_budget_mib: lots")
	}
	if n := strings.Count(err.Error(), "plugins.memory_budget_mib ("); n != 1 {
		t.Errorf("reported %d times, want once:\n%v", n, err)
	}
}

// A sha256 written without quotes is what the operator typed, even when
// YAML reads it as a number: all digits (leading zeros), more digits than
// an int64, or digits with one "e" (a float to YAML).
func TestLoadTakesUnquotedDigestsAsWritten(t *testing.T) {
	t.Parallel()
	for _, digest := range []string{
		strings.Repeat("0", 64),
		strings.Repeat("1234567890", 6) + "1234",
		"1e" + strings.Repeat("0", 62),
		"0x" + strings.Repeat("a", 62),
	} {
		path := writeYAML(t, "plugins:\n  bundles:\n    tasks:\n      sha256: "+digest+"\n")
		c, err := load(path, true, nil, environ())
		if strings.HasPrefix(digest, "0x") {
			// Not 64 hex digits: refused, naming the file and line.
			if err == nil || !strings.Contains(err.Error(), "plugins.bundles.tasks.sha256 ("+path+":4)") {
				t.Errorf("sha256: %s: error = %v, want one naming %s:4", digest, err, path)
			}
			continue
		}
		if err != nil {
			t.Errorf("sha256: %s (unquoted): %v", digest, err)
			continue
		}
		if got := c.Plugins.Bundles["tasks"].SHA256; got != digest {
			t.Errorf("sha256: %s (unquoted) read as %q", digest, got)
		}
	}
}

// lineWith returns the line of s that starts with prefix, or "".
func lineWith(s, prefix string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// parseYAMLFile reads whatever koanf accepted: it must not panic, and every
// key koanf found has a line.
func FuzzParseYAMLFile(f *testing.F) {
	for _, s := range []string{
		"addr: 127.0.0.1:8080\n",
		"plugins:\n  bundles:\n    tasks:\n      sha256: 000\n      routes: [a, b]\n",
		"a: &x {b: 1}\nc: *x\n",
		"- 1\n- 2\n",
		"plans:\n  gold: {retention: 1h}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		ko := koanf.New(".")
		if err := ko.Load(rawBytes(body), yaml.Parser()); err != nil {
			return
		}
		yf := parseYAMLFile("f.yaml", []byte(body))
		for _, key := range ko.Keys() {
			if strings.Contains(key, "<<") {
				continue // merge keys: koanf folds them in
			}
			if _, ok := yf.lines[key]; !ok && !strings.Contains(key, ".") {
				t.Errorf("top-level key %q has no line", key)
			}
		}
	})
}

// rawBytes is a koanf provider of an in-memory document.
type rawBytes string

func (r rawBytes) ReadBytes() ([]byte, error) { return []byte(r), nil }
func (r rawBytes) Read() (map[string]any, error) {
	return nil, errors.New("rawBytes: ReadBytes only")
}
