package devauth

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// testEnv is a devauth Server mounted on a real HTTP server.
type testEnv struct {
	s        *Server
	srv      *httptest.Server
	issuer   string
	resource string
}

// newTestEnv starts a Server on httptest with a fresh data directory;
// mutate, if set, adjusts the options first.
func newTestEnv(t *testing.T, mutate func(*Options)) *testEnv {
	t.Helper()
	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	opts := Options{
		Issuer:   srv.URL,
		Resource: srv.URL + "/mcp",
		DataDir:  t.TempDir(),
		Logger:   slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	s.Register(e)
	return &testEnv{s: s, srv: srv, issuer: srv.URL, resource: s.opts.Resource}
}

// browser returns a client that keeps cookies and does not follow
// redirects, so tests can read each Location.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// registered is a dynamically registered client.
type registered struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret"`
}

// register registers a client with body and fails the test unless it is
// created.
func (env *testEnv) register(t *testing.T, body map[string]any) registered {
	t.Helper()
	status, raw := env.postJSON(t, pathRegister, body)
	if status != http.StatusCreated {
		t.Fatalf("register: status %d, body %s", status, raw)
	}
	var r registered
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// publicClient registers a public client with redirect.
func (env *testEnv) publicClient(t *testing.T, redirect string) registered {
	t.Helper()
	return env.register(t, map[string]any{
		"client_name":                "Test Client",
		"redirect_uris":              []string{redirect},
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	})
}

func (env *testEnv) postJSON(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(env.issuer+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// tokenRequest posts form to the token endpoint, with Basic credentials if
// basicID is set, and decodes the JSON answer.
func (env *testEnv) tokenRequest(t *testing.T, form url.Values, basicID, basicSecret string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.issuer+pathToken, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicID != "" {
		req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("token response Cache-Control = %q, want no-store", got)
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("token response is not JSON: %v", err)
	}
	return resp.StatusCode, out
}

// pkce returns a fresh code verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	return verifier, s256(verifier)
}

// authorizeURL builds an authorization request URL.
func (env *testEnv) authorizeURL(clientID, redirect, challenge, state string, extra url.Values) string {
	q := url.Values{
		"client_id":             {clientID},
		"redirect_uri":          {redirect},
		"response_type":         {"code"},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"state":                 {state},
		"resource":              {env.resource},
	}
	for k, v := range extra {
		q[k] = v
	}
	return env.issuer + pathAuthorize + "?" + q.Encode()
}

// get fetches u with c and returns the response with its body read.
func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// consentToken extracts the sealed form token from a consent page.
func consentToken(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("consent page has no form token:\n%s", page)
	}
	return m[1]
}

// submitConsent posts the consent form and returns the response.
func (env *testEnv) submitConsent(t *testing.T, c *http.Client, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(env.issuer+pathAuthorize, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// location parses the redirect of resp.
func location(t *testing.T, resp *http.Response) *url.URL {
	t.Helper()
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		t.Fatalf("status %d, want a redirect", resp.StatusCode)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// approvedCode runs the consent flow for a public client and returns the
// code it was redirected with.
func (env *testEnv) approvedCode(t *testing.T, clientID, redirect, challenge string, decision url.Values) string {
	t.Helper()
	c := browser(t)
	resp, page := get(t, c, env.authorizeURL(clientID, redirect, challenge, "st-1", nil))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("authorize: status %d, body %s", resp.StatusCode, page)
	}
	form := url.Values{"form": {consentToken(t, page)}, "decision": {"approve"},
		"subject": {"alice"}, "org": {"org_acme"}, "role": {"member"}}
	for k, v := range decision {
		form[k] = v
	}
	resp, body := env.submitConsent(t, c, form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent: status %d, body %s", resp.StatusCode, body)
	}
	loc := location(t, resp)
	if loc.Query().Get("error") != "" {
		t.Fatalf("consent redirected with error %q: %s", loc.Query().Get("error"), loc.Query().Get("error_description"))
	}
	return loc.Query().Get("code")
}
