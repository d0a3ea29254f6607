package config

import "strings"

// API configures the REST API at /api/v1.
type API struct {
	// SigningKey signs the API's opaque cursors. Every replica must use the
	// same key, so it is required with store.driver postgres; at least 32
	// characters. Empty (the default, single node only): a random key is
	// generated into <data_dir>/api/signing-key on first start.
	SigningKey Secret `koanf:"signing_key"`

	// PreviousSigningKeys are former signing keys, comma-separated, at least
	// 32 characters each: they only decrypt what the store encrypted under
	// them (webhook secrets, idempotency records). To rotate signing_key,
	// move the old value here; at start every webhook secret is encrypted
	// again under the new key, and after 24 h (the life of idempotency
	// records) the old value may be removed. Default empty. Prints redacted.
	PreviousSigningKeys Secret `koanf:"previous_signing_keys"`
}

// PreviousSigningKeyList returns api.previous_signing_keys split at commas,
// empty entries dropped. The values are secrets: never log them.
func (a API) PreviousSigningKeyList() []string {
	var out []string
	for _, k := range strings.Split(a.PreviousSigningKeys.Reveal(), ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// validate checks the api section.
func (a API) validate(p *problems, driver string) {
	switch {
	case a.SigningKey == "" && driver == DriverPostgres:
		p.add("api.signing_key", "is required with store.driver postgres: every replica must sign cursors with the same key "+
			"(at least 32 random characters, e.g. from `openssl rand -base64 48`)")
	case a.SigningKey != "" && len(a.SigningKey.Reveal()) < 32:
		p.add("api.signing_key", "is too short (want at least 32 characters); the value is not shown")
	}
	for i, k := range a.PreviousSigningKeyList() {
		if len(k) < 32 {
			p.add("api.previous_signing_keys", "entry %d is too short (want at least 32 characters); the value is not shown", i)
		}
	}
}
