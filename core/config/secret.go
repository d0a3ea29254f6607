package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Secret is a configuration value that is a credential, such as
// runner.http.token. It prints as "[redacted]" (or "" when empty) with every
// fmt verb, in slog and when marshalled as text (JSON, YAML), so that logging
// or dumping a Config never shows it. Reveal returns the value itself, for
// the one place that sends it.
type Secret string

// Reveal returns the credential.
func (s Secret) Reveal() string { return string(s) }

// String is "[redacted]", or "" when the secret is empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// Format prints String() for every verb (%d and %x included).
func (s Secret) Format(f fmt.State, verb rune) { fmt.Fprintf(f, fmt.FormatString(f, verb), s.String()) }

// LogValue is String(), for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText is String(), for encoding/json and YAML encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// DSN is a database connection string, such as store.dsn, that may hold a
// password. It prints with RedactDSN applied — with every fmt verb, in slog
// and when marshalled as text — so that logging or dumping a Config never
// shows the password. Reveal returns the value itself, to open the database.
type DSN string

// Reveal returns the connection string, password included.
func (d DSN) Reveal() string { return string(d) }

// String is RedactDSN of the value.
func (d DSN) String() string { return RedactDSN(string(d)) }

// Format prints String() for every verb (%d and %x included).
func (d DSN) Format(f fmt.State, verb rune) { fmt.Fprintf(f, fmt.FormatString(f, verb), d.String()) }

// LogValue is String(), for log/slog.
func (d DSN) LogValue() slog.Value { return slog.StringValue(d.String()) }

// MarshalText is String(), for encoding/json and YAML encoders.
func (d DSN) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// redactedValue replaces a password in RedactDSN's output.
const redactedValue = "xxxxx"

// secretParams are the query parameters (URLs) and key=value settings
// (libpq connection strings, SQLite URIs) whose values are credentials.
var secretParams = []string{"password", "sslpassword", "passwd", "pwd", "token", "access_token", "api_key", "apikey", "secret"}

// keyValueSecretRE finds key=value settings of secretParams; a value is a
// single-quoted string (libpq) or runs to the next space or "&".
var keyValueSecretRE = regexp.MustCompile(`(?i)\b(` + strings.Join(secretParams, "|") + `)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// RedactDSN returns a connection string or URL fit for logs and error
// messages: the password of a URL's user information, and the values of
// password-like query parameters or key=value settings ("password",
// "sslpassword", "token", …), become "xxxxx". A string with nothing to
// redact is returned unchanged. A URL that does not parse and might hold
// credentials (it has "@" or a password-like word) is reduced to its
// scheme, "postgres://xxxxx"; other strings that are not URLs have anything
// before their last "@" replaced.
//
//	postgres://kadu:s3cret@db:5432/kadu?sslmode=require → postgres://kadu:xxxxx@db:5432/kadu?sslmode=require
//	host=db user=kadu password='s 3' dbname=kadu         → host=db user=kadu password=xxxxx dbname=kadu
func RedactDSN(dsn string) string {
	scheme, rest, isURL := strings.Cut(dsn, "://")
	if !isURL {
		out := keyValueSecretRE.ReplaceAllString(dsn, "${1}${2}"+redactedValue)
		if i := strings.LastIndex(out, "@"); i >= 0 {
			out = redactedValue + out[i:]
		}
		return out
	}
	u, err := url.Parse(dsn)
	if err != nil {
		if strings.Contains(rest, "@") || mentionsSecret(rest) {
			return scheme + "://" + redactedValue
		}
		return dsn
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redactedValue)
		changed = true
	}
	if q, ok := redactQuery(u.RawQuery); ok {
		u.RawQuery = q
		changed = true
	}
	if !changed {
		return dsn
	}
	return u.String()
}

// redactQuery replaces the values of secretParams in a raw query string,
// leaving every other byte as it was. ok reports a replacement.
func redactQuery(raw string) (string, bool) {
	if raw == "" {
		return raw, false
	}
	parts := strings.Split(raw, "&")
	ok := false
	for i, part := range parts {
		k, _, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if slices.Contains(secretParams, strings.ToLower(name)) {
			parts[i] = k + "=" + redactedValue
			ok = true
		}
	}
	return strings.Join(parts, "&"), ok
}

func mentionsSecret(s string) bool {
	s = strings.ToLower(s)
	return slices.ContainsFunc(secretParams, func(p string) bool { return strings.Contains(s, p) })
}
