package config

import "net/url"

// replicas refuses, with store.driver postgres, what would hold on one
// replica only: PostgreSQL is the store for several replicas, so a
// configuration on it that keeps state on each replica's own disk works on
// one node and breaks behind a load balancer (a file uploaded through one
// replica is missing on the others; a token issued by one replica's
// embedded issuer fails on the others). single_node: true says there is one
// process and lifts these rules.
func (p *problems) replicas(c *Config) {
	if c.SingleNode || c.Store.Driver != DriverPostgres {
		return
	}
	if c.filesLocal() {
		where := "file://<data_dir>/blobs (files.url is empty)"
		if c.Files.URL != "" {
			where = c.Files.URL
		}
		p.add("files.url", "keeps file contents on this replica's disk (%s), but store.driver is postgres, the store for "+
			"several replicas, and the others would not find them; set files.url to a shared bucket "+
			"(s3://bucket?region=…, &endpoint=…&use_path_style=true for S3-compatible stores), "+
			"or set single_node: true if this is the only process", where)
	}
	if c.Auth.Issuer == "" {
		p.add("auth.issuer", "is empty, so the embedded development issuer signs tokens with keys in this replica's data_dir, "+
			"but store.driver is postgres, the store for several replicas, and the others would reject its tokens; "+
			"set auth.issuer to your OIDC issuer (https), or set single_node: true if this is the only process")
	}
}

// filesLocal reports whether the blobs live in a local directory (files.url
// empty or file://).
func (c *Config) filesLocal() bool {
	if c.Files.URL == "" {
		return true
	}
	u, err := url.Parse(c.Files.URL)
	return err == nil && u.Scheme == "file"
}
