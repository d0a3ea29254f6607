package app

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// resignWithOrg returns token with its org_id claim replaced by org,
// signed again with the embedded issuer's key from dataDir: the token an
// issuer that does not check organisation ids (an external IdP, or the dev
// issuer's signing code without its own check) would hand out.
func resignWithOrg(t *testing.T, dataDir, token, org string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	claims["org_id"] = org
	raw, err := os.ReadFile(filepath.Join(dataDir, "devauth", "signing-key.json"))
	if err != nil {
		t.Fatalf("reading the dev issuer's signing key: %v", err)
	}
	var key jose.JSONWebKey
	if err := key.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(claims)
	jws, err := signer.Sign(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOrgIDWithDotsIsRefusedAtTheDoor reproduces a token whose
// organisation claim is "a..b": before the organisation id rule, POST
// /files answered 500 (the blob key "a..b/file_…" is refused deep down).
// Now the token itself is refused with 401 invalid_token saying which
// claim is wrong, on every route, and nothing reaches the handlers.
func TestOrgIDWithDotsIsRefusedAtTheDoor(t *testing.T) {
	srv := startServerWith(t, false, nil)
	good, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_ok"})
	if err != nil {
		t.Fatal(err)
	}
	fileBody := `{"filename":"extrato.csv","content_type":"text/csv","size_bytes":3}`

	// The re-signing itself yields tokens the server accepts.
	control := restClient{t: t, base: srv.baseURL, token: resignWithOrg(t, srv.cfg.DataDir, good, "org_resigned")}
	if status, _, body := control.do("POST", "/files", fileBody); status != 201 {
		t.Fatalf("POST /files with a re-signed valid token: %d %v; want 201", status, body)
	}

	for _, org := range []string{"a..b", "../org_ok", "org_ok/x", "tenant:1"} {
		t.Run(org, func(t *testing.T) {
			c := restClient{t: t, base: srv.baseURL, token: resignWithOrg(t, srv.cfg.DataDir, good, org)}
			// Two routes per id: failed authentications are rate limited per address.
			for _, route := range [][2]string{{"POST", "/files"}, {"GET", "/tasks"}} {
				body := ""
				if route[0] == "POST" {
					body = fileBody
				}
				status, h, resp := c.do(route[0], route[1], body)
				if status != 401 {
					t.Fatalf("%s %s with org_id %q: %d %v; want 401", route[0], route[1], org, status, resp)
				}
				www := h.Get("WWW-Authenticate")
				if !strings.Contains(www, `error="invalid_token"`) || !strings.Contains(www, "organisation claim org_id is not a valid organisation id") {
					t.Errorf("WWW-Authenticate = %q; want invalid_token naming the organisation claim", www)
				}
				errs, _ := resp["errors"].([]any)
				if len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["detail"].(string), `organisation claim "org_id"`) {
					t.Errorf("body %v; want a detail naming the organisation claim", resp)
				}
			}
		})
	}
	logs := srv.logs.String()
	if strings.Contains(logs, `"status":500`) || strings.Contains(logs, "invalid blob key") {
		t.Fatalf("a bad organisation id reached a handler:\n%s", logs)
	}
	if !strings.Contains(logs, "invalid organisation id") {
		t.Fatalf("the log lacks the refusal reason:\n%s", logs)
	}
}
