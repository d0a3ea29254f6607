package auth

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// metadataPrefix is RFC 9728's well-known path segment.
const metadataPrefix = "/.well-known/oauth-protected-resource"

// MetadataHandler serves the Protected Resource Metadata (RFC 9728, docs/reference/auth.md)
// of the MCP endpoint whose public URL is resource. GET and HEAD answer 200
// with exactly
//
//	{"resource":"<resource, no trailing slash>","authorization_servers":["<issuer>"],"scopes_supported":["kadu.read","kadu.write","kadu.run","kadu.admin"],"bearer_methods_supported":["header"],"resource_name":"Kadu"}
//
// with Access-Control-Allow-Origin: * and Cache-Control: public,
// max-age=300 (the document only changes with the configuration, and five
// minutes bounds how long a client keeps an old issuer after a change).
// OPTIONS answers a CORS preflight with 204 (methods GET, OPTIONS; the
// requested headers reflected). Other methods get 405 with Allow. No token is
// needed. The body is built once; the handler is safe for concurrent use.
//
// aliases are other URLs of the same endpoint (see NewAuthenticator): a
// request whose Host is an alias's gets that alias as "resource".
func MetadataHandler(resource, issuer string, aliases ...string) http.Handler {
	m := &metadataHandler{body: metadataDocument(resource, issuer), byHost: map[string][]byte{}}
	for _, alias := range aliases {
		if u, err := url.Parse(alias); err == nil {
			m.byHost[strings.ToLower(u.Host)] = metadataDocument(alias, issuer)
		}
	}
	return m
}

func metadataDocument(resource, issuer string) []byte {
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{
		Resource:               trimSlash(resource),
		AuthorizationServers:   []string{issuer},
		ScopesSupported:        SupportedScopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Kadu",
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // URLs with "&" stay as written
	if err := enc.Encode(doc); err != nil {
		// Strings and string slices always encode.
		panic("auth: encoding protected resource metadata: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

type metadataHandler struct {
	// fixed at creation
	body   []byte            // the canonical resource's document
	byHost map[string][]byte // lower-case host[:port] of an alias → its document
}

func (m *metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			body, ok := m.byHost[strings.ToLower(r.Host)]
			if !ok {
				body = m.body
			}
			_, _ = w.Write(body)
		}
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		if req := r.Header.Values("Access-Control-Request-Headers"); len(req) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(req, ", "))
		}
		h.Set("Access-Control-Max-Age", "86400")
		h.Add("Vary", "Access-Control-Request-Headers")
		w.WriteHeader(http.StatusNoContent)
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// MetadataPaths returns where to mount MetadataHandler for resource: first
// "/.well-known/oauth-protected-resource<path>" (e.g. ".../mcp"), then the
// bare "/.well-known/oauth-protected-resource". When the resource has no
// path only the bare one is returned.
func MetadataPaths(resource string) []string {
	_, path := metadataLocation(resource)
	if path == "" {
		return []string{metadataPrefix}
	}
	return []string{metadataPrefix + path, metadataPrefix}
}

// metadataLocation splits resource into its origin and its escaped path
// without a trailing slash (RFC 9728 §3.1). Query and fragment are ignored.
func metadataLocation(resource string) (origin, path string) {
	u, err := url.Parse(trimSlash(resource))
	if err != nil {
		return "", ""
	}
	return u.Scheme + "://" + u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
}
