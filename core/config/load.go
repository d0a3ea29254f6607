package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// DefaultPath is the configuration file read when --config is not given. It
// is relative to the working directory and may be missing.
const DefaultPath = "config/kadu.yaml"

// EnvPrefix starts every environment variable that configures Kadu.
const EnvPrefix = "KADU_"

// flagAnnotation marks a pflag.Flag with the configuration key it sets.
const flagAnnotation = "kadu.config.key"

// sourced is a value read from the environment or a flag, with where it came
// from. Fields are exported so that koanf's deep copies keep them.
type sourced struct {
	Source string // "env KADU_ADDR", "flag --addr"
	Value  any
}

// Load builds the configuration — Defaults() ← the YAML file at path ← KADU_
// environment variables ← the flags in flags that the user set and that were
// bound with BindFlag — then fills derived defaults and validates it.
//
// path "" means DefaultPath. explicit says the user named the file (with
// --config): then it must exist; otherwise a missing file is skipped. flags
// may be nil.
//
// Relative data_dir values (and a leading "~/") are made absolute; an empty
// public_url becomes "http://" + addr when addr names a host; one trailing
// slash is removed from public_url.
//
// The error lists every problem found — keys that are unknown, values that
// do not decode, rules a value breaks — one *KeyError per line, each naming
// the key and where its value came from (file:line, env KADU_…, flag --…;
// none for a default); a missing explicit file or malformed YAML is
// reported alone. errors.Is(err, fs.ErrNotExist) holds
// for a missing explicit file.
func Load(path string, explicit bool, flags *pflag.FlagSet) (*Config, error) {
	return load(path, explicit, flags, os.Environ)
}

func load(path string, explicit bool, flags *pflag.FlagSet, environ func() []string) (*Config, error) {
	if path == "" {
		path = DefaultPath
	}
	cfg := Defaults()
	var p problems
	// base is where each relative path key set by the file resolves: the
	// file's directory. Keys the environment or a flag sets later leave it.
	base := paths{}

	from := origins{}

	fileKo := koanf.New(".")
	switch err := fileKo.Load(file.Provider(path), yaml.Parser()); {
	case err == nil:
		// Read again for what koanf drops: lines, and scalars as written.
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config file %q: %w", path, err)
		}
		yf := parseYAMLFile(path, data)
		flat := yf.sourced(fileKo.All())
		p.apply(&cfg, flat, path)
		from.recordFile(&yf, flat)
		base.fromFile(path, fileKo.Keys())
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		// The default file is optional.
	default:
		return nil, fmt.Errorf("config file %q: %w", path, err)
	}

	envKo := koanf.New(".")
	if err := envKo.Load(env.Provider(".", env.Opt{
		Prefix:        EnvPrefix,
		TransformFunc: envKey,
		EnvironFunc:   environ,
	}), nil); err != nil {
		return nil, fmt.Errorf("reading the environment: %w", err)
	}
	p.apply(&cfg, envKo.All(), "environment")
	from.record(envKo.All())
	base.overridden(envKo.Keys())

	if flags != nil {
		flagKo := koanf.New(".")
		if err := flagKo.Load(posflag.ProviderWithFlag(flags, ".", nil, func(f *pflag.Flag) (string, any) {
			keys := f.Annotations[flagAnnotation]
			if len(keys) != 1 {
				return "", nil
			}
			return keys[0], sourced{Source: "flag --" + f.Name, Value: posflag.FlagVal(flags, f)}
		}), nil); err != nil {
			return nil, fmt.Errorf("reading flags: %w", err)
		}
		p.apply(&cfg, flagKo.All(), "flags")
		from.record(flagKo.All())
		base.overridden(flagKo.Keys())
	}

	// Every problem in one report: values that do not decode, then the
	// rules the others break, each with where its value came from.
	cfg.normalize(base)
	if all := from.merge(p, cfg.Validate()); len(all) > 0 {
		return nil, fmt.Errorf("invalid configuration:\n%w", errors.Join(all...))
	}
	return &cfg, nil
}

// envKey maps KADU_AUTH__REQUIRE_AT_JWT to "auth.require_at_jwt".
func envKey(name, value string) (string, any) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, EnvPrefix)), "__", ".")
	if key == "" {
		return "", nil
	}
	return key, sourced{Source: "env " + name, Value: value}
}

// EnvVar returns the environment variable that sets key, e.g. "auth.issuer"
// → "KADU_AUTH__ISSUER".
func EnvVar(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// BindFlag makes the flag called name set the configuration key key when
// the user sets it on the command line (a flag left at its default does not
// override the file or the environment). It fails if the flag is not defined
// in flags or key is not a configuration key.
func BindFlag(flags *pflag.FlagSet, name, key string) error {
	if _, ok := configSchema.fields[key]; !ok {
		return fmt.Errorf("binding flag --%s: %q is not a configuration key", name, key)
	}
	if err := flags.SetAnnotation(name, flagAnnotation, []string{key}); err != nil {
		return fmt.Errorf("binding flag --%s to %s: %w", name, key, err)
	}
	return nil
}

// normalize fills derived defaults and canonical forms before Validate.
// Relative paths resolve against base.dir(key).
func (c *Config) normalize(base paths) {
	c.DataDir = absPath(base.dir("data_dir"), c.DataDir)
	if c.PublicURL == "" && hasSpecificHost(c.Addr) {
		c.PublicURL = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimSuffix(c.PublicURL, "/")
	c.Store.normalize(base.dir("store.dsn"))
	c.Orgs.normalize()
	c.Plugins.normalize(base)
}

// absPath makes a file path absolute: a leading "~/" is the home directory
// and a relative path is resolved against dir, or the working directory
// when dir is "". "" stays "".
func absPath(dir, d string) string {
	if d == "" {
		return ""
	}
	if d == "~" || strings.HasPrefix(d, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			d = filepath.Join(home, d[1:])
		}
	}
	if dir != "" && !filepath.IsAbs(d) {
		d = filepath.Join(dir, d)
	}
	if abs, err := filepath.Abs(d); err == nil {
		d = abs
	}
	return d
}
