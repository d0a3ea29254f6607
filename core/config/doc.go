// Package config is Kadu's typed configuration: the Config struct with a
// default on every field, loading with koanf, and validation whose errors
// name the full key and what is allowed.
//
// It owns: the key names, their defaults and units, the order in which
// sources override each other, the environment variable mapping, and every
// rule a value must satisfy before the server starts.
//
// It must not: open files other than the YAML configuration, create the data
// directory, start anything, or be read by any package but core/app and the
// kadu command (everything else receives the values it needs from core/app).
//
// # Sources and precedence
//
// Load applies, each one overriding the previous:
//
//  1. Defaults() — the embedded defaults, also written out in config/kadu.yaml;
//  2. the YAML file (--config, default config/kadu.yaml; the default path may
//     be missing, a path given explicitly must exist);
//  3. the environment (KADU_… variables, below);
//  4. command-line flags the user actually set (flags bound with BindFlag).
//
// Unknown keys, in the file or in the environment, are errors naming the key
// (and suggesting the closest known one), so a typo such as "adress" never
// passes silently. A key set to null in the file keeps its earlier value.
//
// # Environment variables
//
// A variable configures a key when its name starts with KADU_. The rest of the
// name is lower-cased; a double underscore "__" separates nesting levels and a
// single "_" stays part of the key:
//
//	KADU_ADDR=0.0.0.0:8080                  addr
//	KADU_PUBLIC_URL=https://mcp.example.com public_url
//	KADU_LOG__LEVEL=debug                   log.level
//	KADU_AUTH__ISSUER=https://id.example.com auth.issuer
//	KADU_AUTH__REQUIRE_AT_JWT=false         auth.require_at_jwt
//	KADU_AUTH__ALGORITHMS=RS256,ES256       auth.algorithms (lists are comma-separated)
//	KADU_AUTH__DEV__DEFAULT_ROLE=admin      auth.dev.default_role
//	KADU_STORE__DSN=postgres://…            store.dsn
//	KADU_RUNNER__HTTP__TOKEN=…              runner.http.token
//	KADU_PLANS__TEAM__COST_CAP_CENTS=900000 plans.team.cost_cap_cents
//
// An empty value is a value: KADU_AUTH__ISSUER= clears an issuer set in the
// file. Every KADU_ variable must name a key; EnvVar gives the variable for a
// key.
//
// # Named entries
//
// plans is a map section: its entries are named by the configuration,
// plans.<name>.<field> (a name is a lower-case letter, then up to 31 of a-z,
// 0-9, "_", "-"). An entry named in any source starts from the built-in entry
// of that name, if any, else from zero values, and later sources override
// single fields; an unknown field is an unknown key.
//
// # Values
//
// Booleans are true/false (also 1/0, t/f); durations use Go syntax ("30s",
// "5m", "720h"); lists are YAML sequences, or comma-separated strings in the
// environment and in flags.
//
// # Secrets
//
// runner.http.token is a Secret and store.dsn a DSN: both print redacted (with
// fmt, slog and text marshalling), and no error message shows a password or a
// token. RedactDSN does the same for any connection string or URL.
package config

// The configuration reference, docs/reference/config.md, is generated from
// the fields of Config and their doc comments (reference_test.go).
//
//go:generate go test -run ^TestConfigReference$ -update .
