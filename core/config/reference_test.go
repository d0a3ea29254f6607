package config

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// The configuration reference, docs/reference/config.md, is generated from
// the configuration structs: the keys and types from their koanf tags, the
// defaults from Defaults(), the meaning from the fields' doc comments (read
// with go/ast, so the comment a developer edits is the only copy). Run
//
//	go generate ./core/config
//
// (which runs this test with -update) after changing a key, a default or a
// field's comment.
var update = flag.Bool("update", false, "rewrite docs/reference/config.md")

const referencePath = "docs/reference/config.md"

// refRow is one key of the reference.
type refRow struct {
	Key, Env, Type, Default, Meaning string
	section                          string // top-level section, "" for top-level keys
}

func TestConfigReference(t *testing.T) {
	root := moduleRoot(t)
	got := renderReference(referenceRows(t, root))
	path := filepath.Join(root, referencePath)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go generate ./core/config", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: a key, default or field comment changed; run go generate ./core/config", referencePath)
	}
}

// config/kadu.yaml says it lists every key with its default: each of its
// keys must be in the reference with the same default, and each key of the
// reference must be in it.
func TestConfigReferenceMatchesKaduYAML(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	rows := map[string]refRow{}
	for _, r := range referenceRows(t, root) {
		rows[r.Key] = r
	}
	path := filepath.Join(root, DefaultPath)
	ko := koanf.New(".")
	if err := ko.Load(file.Provider(path), yaml.Parser()); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for key, v := range ko.All() {
		generic, entry := genericKey(key)
		listed[generic] = true
		r, ok := rows[generic]
		if !ok {
			t.Errorf("%s sets %s, which the reference does not list", path, key)
			continue
		}
		if v == nil { // ~: listed, keeping a default that is no value at all
			if !strings.Contains(r.Default, unsetDefault) {
				t.Errorf("%s: %s is ~ (unset); the reference's default is %s", path, key, r.Default)
			}
			continue
		}
		typ := keyType(generic)
		val, _, msg := decode(key, typ, v)
		if msg != "" {
			t.Errorf("%s: %s: %s", path, key, msg)
			continue
		}
		shown := renderValue(val)
		switch {
		case strings.HasPrefix(generic, "plans."):
			if !strings.Contains(r.Default, "`"+entry+": "+shown+"`") {
				t.Errorf("%s: %s is %s; the reference's default is %s", path, key, shown, r.Default)
			}
		case strings.HasPrefix(generic, "plugins.bundles.") && !firstPartySpecific[strings.TrimPrefix(generic, "plugins.bundles.<name>.")]:
			if r.Default != "`"+shown+"`" {
				t.Errorf("%s: %s is %s; the reference's default is %s", path, key, shown, r.Default)
			}
		case !strings.Contains(generic, namePlaceholder) && r.Default != "`"+shown+"`":
			t.Errorf("%s: %s is %s; the reference's default is %s", path, key, shown, r.Default)
		}
	}
	for key := range rows {
		// Derived top-level defaults are listed commented out.
		if !listed[key] && !bytes.Contains(body, []byte("\n# "+key+":")) {
			t.Errorf("the reference lists %s, which %s does not", key, path)
		}
	}
}

// firstPartySpecific are the keys of plugins.bundles.<name> whose values in
// config/kadu.yaml are the first-party bundles' own, not the defaults of a
// bundle an operator adds.
var firstPartySpecific = map[string]bool{
	"enabled": true, "required": true, "path": true, "sha256": true, "routes": true, "settings": true,
}

// audienceFields are the Bundle fields whose default is unset, which
// means something other than an empty list (Bundle.Restricted).
var audienceFields = map[string]bool{"Organisations": true, "Plans": true}

// unsetDefault is the default shown for a key whose default is unset.
const unsetDefault = "unset (every organisation)"

// genericKey spells the key of a map entry with the placeholder:
// "plans.team.retention" → "plans.<name>.retention", "team".
func genericKey(key string) (string, string) {
	section, _, name, rest, ok := configSchema.entry(key)
	if !ok {
		return key, ""
	}
	return section + "." + namePlaceholder + "." + rest, name
}

// keyType is the Go type of a leaf key (spelled with the placeholder).
func keyType(key string) reflect.Type {
	if f, ok := configSchema.fields[key]; ok {
		return f.typ
	}
	section, rest, _ := strings.Cut(key, "."+namePlaceholder+".")
	return configSchema.maps[section].elem.fields[rest].typ
}

// referenceRows walks Config in declaration order.
func referenceRows(t *testing.T, root string) []refRow {
	t.Helper()
	docs := fieldDocs(t, root)
	var rows []refRow
	// index is the path to the field from the root of the walk: Config, or
	// the entry struct of a map section (then entry renders its default).
	var walk func(typ reflect.Type, prefix, section string, index []int, entry func(index []int) string)
	walk = func(typ reflect.Type, prefix, section string, index []int, entry func(index []int) string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			idx := append(slices.Clone(index), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix, section, idx, entry)
				continue
			}
			key := prefix + f.Tag.Get("koanf")
			sec := section
			if prefix == "" && (f.Type.Kind() == reflect.Struct || isStructMap(f.Type)) {
				sec = key
			}
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, key+".", sec, idx, entry)
			case isStructMap(f.Type):
				walk(f.Type.Elem(), key+"."+namePlaceholder+".", sec, nil, mapDefaults(key))
			default:
				meaning := docs[typ.PkgPath()+"."+typ.Name()+"."+f.Name]
				if rest, ok := strings.CutPrefix(meaning, f.Name+" "); ok {
					// "Addr is the listen address" → "`addr` is the listen address"
					meaning = "`" + f.Tag.Get("koanf") + "` " + rest
				}
				r := refRow{Key: key, Env: "`" + EnvVar(key) + "`", Type: typeName(f.Type), Meaning: meaning, section: sec}
				switch {
				case entry != nil:
					r.Default = entry(idx)
				case key == "data_dir":
					r.Default = "`$XDG_STATE_HOME/kadu`, else `~/.local/state/kadu`"
				default:
					r.Default = "`" + renderValue(reflect.ValueOf(Defaults()).FieldByIndex(idx)) + "`"
				}
				if meaning == "" {
					t.Errorf("%s (%s.%s) has no doc comment: say what it means", key, typ.Name(), f.Name)
				}
				rows = append(rows, r)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "", "", nil, nil)
	return rows
}

// mapDefaults renders the default of a field of the entries of map section
// key: for plans, each built-in plan's value; for bundles, the value a
// bundle an operator adds gets (limits defaulted), the first-party bundles
// being described apart; trusted keys have no default entry.
func mapDefaults(key string) func(index []int) string {
	return func(index []int) string {
		switch key {
		case "plugins.bundles":
			v := reflect.ValueOf(Bundle{}.WithDefaults()).FieldByIndex(index)
			if audienceFields[reflect.TypeFor[Bundle]().FieldByIndex(index).Name] {
				// Unset and empty differ here: unset is everyone, [] nobody.
				return unsetDefault
			}
			return "`" + renderValue(v) + "`"
		case "plugins.trusted_keys":
			return "none: no key is trusted"
		}
		plans := Defaults().Plans
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(plans)) {
			parts = append(parts, "`"+name+": "+renderValue(reflect.ValueOf(plans[name]).FieldByIndex(index))+"`")
		}
		return strings.Join(parts, ", ")
	}
}

// renderValue writes a default as config/kadu.yaml would.
func renderValue(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		return formatDuration(time.Duration(v.Int()))
	case v.Type() == stringsType:
		return "[" + strings.Join(v.Interface().([]string), ", ") + "]"
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		return strconv.FormatInt(v.Int(), 10)
	}
}

// formatDuration is time.Duration.String without zero units: 5m, 720h, 1h30m.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t == stringsType:
		return "list of strings"
	case t.Name() == "Secret" || t.Name() == "DSN":
		return "string (secret, never logged)"
	}
	switch t.Kind() {
	case reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	}
	return t.Kind().String()
}

// fieldDocs reads the doc comments of the fields of every struct in the
// packages Config is made of, keyed "<package path>.<Struct>.<Field>".
func fieldDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pkg := range []string{"core/config", "core/plans", "core/plugin/bundleconf"} {
		fset := token.NewFileSet()
		dir := filepath.Join(root, pkg)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, id := range fl.Names {
							out[modulePath+"/"+pkg+"."+ts.Name.Name+"."+id.Name] = oneLine(fl.Doc.Text())
						}
					}
				}
				return true
			})
		}
	}
	return out
}

const modulePath = "github.com/kobana/kadu"

// oneLine joins a doc comment into one Markdown table cell.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// renderReference writes the Markdown page.
func renderReference(rows []refRow) []byte {
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated from the configuration structs by go generate ./core/config; do not edit. -->

Every key Kadu reads, with the environment variable that sets it, its type, its
default and what it means. The meaning is each field's doc comment in
core/config, core/plans and core/plugin/bundleconf; a test fails when this page
is stale, and another when config/kadu.yaml (which spells out the defaults)
disagrees with it.

Sources, each overriding the one before: the built-in defaults; the YAML file
(` + "`--config`" + `, default ` + "`config/kadu.yaml`" + `, which may be missing unless named); the
environment; the command-line flags the user set. Unknown keys are errors, and
every mistake is reported at once, each with where it came from (file and line,
environment variable or flag).

Environment variables: ` + "`KADU_`" + ` and the key upper-cased, ` + "`__`" + ` between nesting
levels (a single ` + "`_`" + ` stays part of the key): ` + "`auth.require_at_jwt`" + ` is
` + "`KADU_AUTH__REQUIRE_AT_JWT`" + `. Lists are comma-separated there. Entries of ` + "`plans`" + `
and ` + "`plugins.bundles`" + ` are named by the configuration: ` + "`<NAME>`" + ` is the entry's
name.

Values: booleans are ` + "`true`" + `/` + "`false`" + `; durations use Go syntax (` + "`30s`" + `, ` + "`5m`" + `,
` + "`1h30m`" + `; a bare number has no unit); lists are YAML sequences. A number or
boolean YAML reads for a string key (an unquoted ` + "`sha256`" + ` of digits) is taken
as written.
`)
	section := "\x00"
	for _, r := range rows {
		if r.section != section {
			section = r.section
			title := "Top level"
			if section != "" {
				title = "`" + section + "`"
			}
			fmt.Fprintf(&b, "\n## %s\n\n", title)
			switch section {
			case "plans":
				b.WriteString("Plans by name; an organisation is on one (orgs.default_plan for new ones). " +
					"The built-in plans are developer and team; a plan named in a source starts from the built-in plan " +
					"of that name, if any, else from zero values, and a plan that is not built in must set every field.\n\n")
			case "plugins":
				b.WriteString("The defaults shown for `plugins.bundles.<name>` are those of a bundle an operator adds. " +
					"The first-party bundles (" + strings.Join(slices.Sorted(maps.Keys(firstPartyBundles())), ", ") +
					") are enabled and required by default, built into the binary (empty path), pinned by sha256 and " +
					"granted their routes; config/kadu.yaml lists them. Per-bundle caps: memory_mib at most " +
					strconv.Itoa(bundleconf.MaxMemoryMiB) + ", max_output_bytes at most " + strconv.Itoa(bundleconf.MaxOutputBytes) + ".\n\n")
			}
			b.WriteString("| Key | Environment | Type | Default | Meaning |\n|---|---|---|---|---|\n")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Key, r.Env, r.Type, r.Default, r.Meaning)
	}
	return b.Bytes()
}

// moduleRoot is the directory holding go.mod, above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
