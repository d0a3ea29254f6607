package config

// API configures the REST API at /api/v1.
type API struct {
	// SigningKey signs the API's opaque cursors. Every replica must use the
	// same key, so it is required with store.driver postgres; at least 32
	// characters. Empty (the default, single node only): a random key is
	// generated into <data_dir>/api/signing-key on first start.
	SigningKey Secret `koanf:"signing_key"`
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
}
