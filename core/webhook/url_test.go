package webhook

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	allow := []string{"dev.test", "*.local.test", "127.0.0.1", "[::1]", "10.1.2.3"}
	tests := []struct {
		name    string
		url     string
		wantErr string // substring; "" when accepted
	}{
		{name: "https with path and query", url: "https://hooks.example.com/kadu?tenant=7"},
		{name: "https with port", url: "https://hooks.example.com:8443/kadu"},
		{name: "trailing dot", url: "https://hooks.example.com./kadu"},
		{name: "public IPv4 literal", url: "https://203.0.114.7/kadu"},
		{name: "public IPv6 literal", url: "https://[2606:4700::1111]/kadu"},
		{name: "upper-case scheme", url: "HTTPS://hooks.example.com/"},
		{name: "underscore label", url: "https://_hooks.example.com/"},
		{name: "allow-listed name over http", url: "http://dev.test:8080/hook"},
		{name: "allow-listed name, other case", url: "http://DEV.test/hook"},
		{name: "allow-listed suffix", url: "http://api.local.test/hook"},
		{name: "allow-listed loopback over http", url: "http://127.0.0.1:3000/hook"},
		{name: "allow-listed IPv6 loopback", url: "http://[::1]:3000/hook"},
		{name: "allow-listed private literal", url: "https://10.1.2.3/hook"},
		{name: "allow-listed loopback in mapped form", url: "http://[::ffff:127.0.0.1]/hook"},

		{name: "empty", url: "", wantErr: "url: required"},
		{name: "http to a public host", url: "http://hooks.example.com/", wantErr: "url: must use https"},
		{name: "suffix does not cover the apex", url: "http://local.test/", wantErr: "url: must use https"},
		{name: "suffix needs a label boundary", url: "http://evillocal.test/", wantErr: "url: must use https"},
		{name: "ftp", url: "ftp://hooks.example.com/", wantErr: "url: must start with https://"},
		{name: "relative", url: "/hooks", wantErr: "url: must start with https://"},
		{name: "no host", url: "https:///hooks", wantErr: "url: host required"},
		{name: "opaque", url: "https:hooks.example.com", wantErr: "url: host required"},
		{name: "user and password", url: "https://kadu:hunter2@hooks.example.com/", wantErr: "url: must not contain a user name or password"},
		{name: "user only", url: "https://token@hooks.example.com/", wantErr: "url: must not contain a user name"},
		{name: "fragment", url: "https://hooks.example.com/#top", wantErr: "url: must not contain a fragment"},
		{name: "empty fragment", url: "https://hooks.example.com/#", wantErr: "url: must not contain a fragment"},
		{name: "port zero", url: "https://hooks.example.com:0/", wantErr: "url: port must be a number from 1 to 65535"},
		{name: "port too big", url: "https://hooks.example.com:65536/", wantErr: "url: port must be a number from 1 to 65535"},
		{name: "empty port", url: "https://hooks.example.com:/", wantErr: "url: port is empty"},
		{name: "not a URL", url: "https://hooks example.com/", wantErr: "url: not a valid URL"},
		{name: "control character", url: "https://hooks.example.com/\x7f", wantErr: "url: not a valid URL"},
		{name: "percent-encoded host", url: "https://hooks%2eexample.com/", wantErr: "url: not a valid URL"},
		{name: "unicode host", url: "https://ганк.example/", wantErr: "url: host is not a valid DNS name"},
		{name: "label starting with hyphen", url: "https://-hooks.example.com/", wantErr: "url: host is not a valid DNS name"},
		{name: "decimal IPv4", url: "https://2130706433/", wantErr: "IPv4 address in a non-standard form"},
		{name: "hex IPv4", url: "https://0x7f.0x1/", wantErr: "IPv4 address in a non-standard form"},
		{name: "localhost", url: "https://localhost/", wantErr: "url: localhost names reach this server"},
		{name: "name under localhost", url: "https://kadu.localhost./", wantErr: "url: localhost names reach this server"},
		{name: "loopback literal", url: "https://127.0.0.2/", wantErr: "url: 127.0.0.2 is not a public address (loopback)"},
		{name: "other loopback literal", url: "https://127.9.9.9/", wantErr: "url: 127.9.9.9 is not a public address (loopback)"},
		{name: "private literal", url: "https://192.168.1.10/", wantErr: "(private)"},
		{name: "metadata literal", url: "https://169.254.169.254/latest/meta-data/", wantErr: "(link-local (cloud metadata))"},
		{name: "mapped loopback literal", url: "https://[::ffff:127.0.0.2]/", wantErr: "(loopback)"},
		{name: "unspecified literal", url: "https://0.0.0.0/", wantErr: `"this network"`},
		{name: "IPv6 unique local", url: "https://[fd00::1]/", wantErr: "(private (unique local))"},
		{name: "IPv6 link-local with zone", url: "https://[fe80::1%25eth0]/", wantErr: "scoped"},
		{name: "allow-list never opens multicast", url: "https://224.0.0.1/", wantErr: "(multicast)"},
		{name: "too long", url: "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength), wantErr: "url: longer than 2048"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateURL(tt.url, allow)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateURL(%q) = %v, want nil", tt.url, err)
				}
				return
			}
			var ue *URLError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ValidateURL(%q) = %v, want a *URLError containing %q", tt.url, err, tt.wantErr)
			}
		})
	}
}

func TestValidateURLHidesCredentials(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://kadu:hunter2@hooks.example.com/",
		"http://kadu:hunter2@hooks.example.com/",
		"https://kadu:hunter2@hooks example.com/",
		"https://kadu:hunter2@[::1/",
	} {
		err := ValidateURL(raw, nil)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ValidateURL(%q) = %v; want an error that does not repeat the password", raw, err)
		}
	}
}

func TestAllowListNoEntriesAllowsNothing(t *testing.T) {
	t.Parallel()
	l := newAllowList([]string{"", " ", "*.", "."})
	for _, host := range []string{"", "example.com", "127.0.0.1", "x"} {
		if l.contains(host) {
			t.Errorf("allow-list of blanks contains %q", host)
		}
	}
}

// FuzzValidateURL checks that ValidateURL never panics, that every error is
// a *URLError naming the field, and that an accepted URL meets the policy.
func FuzzValidateURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/kadu", "http://dev.test:8080/x", "https://[::ffff:127.0.0.1]:443/",
		"https://u:p@h/", "https://h/#f", "https://2130706433/", "https://h:99999/", "https:h", "//h/p",
		"https://[fe80::1%25eth0]/", "https://xn--80ak6aa92e.com/", "HTTP://DEV.TEST./",
	} {
		f.Add(s)
	}
	allow := []string{"dev.test", "*.local.test", "127.0.0.1"}
	f.Fuzz(func(t *testing.T, raw string) {
		err := ValidateURL(raw, allow)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "url: ") {
				t.Fatalf("ValidateURL(%q) error = %v, want a *URLError starting with \"url: \"", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("ValidateURL(%q) accepted what url.Parse refuses: %v", raw, perr)
		}
		switch {
		case u.Scheme != "https" && !(u.Scheme == "http" && newAllowList(allow).contains(u.Hostname())):
			t.Fatalf("ValidateURL(%q) accepted scheme %q", raw, u.Scheme)
		case u.User != nil, u.Fragment != "", strings.Contains(raw, "#"):
			t.Fatalf("ValidateURL(%q) accepted userinfo or a fragment", raw)
		case u.Hostname() == "":
			t.Fatalf("ValidateURL(%q) accepted an empty host", raw)
		case len(raw) > MaxURLLength:
			t.Fatalf("ValidateURL(%q) accepted %d characters", raw, len(raw))
		}
	})
}
