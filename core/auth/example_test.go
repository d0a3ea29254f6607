package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/kobana/kadu/core/auth"
)

// A resource server wires a Verifier, an Authenticator and the metadata
// document. Here the keys are in process, as with the embedded dev server;
// in production leave KeySet nil and the JWKS is fetched from the issuer.
func Example() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const resource = "https://kadu.example/mcp"
	v, err := auth.NewVerifier(auth.Options{
		Issuer:       "https://issuer.example",
		Resource:     resource,
		RequireATJWT: true,
		KeySet:       &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{key.Public()}},
	})
	if err != nil {
		panic(err)
	}
	authn := auth.NewAuthenticator(v, resource, nil)

	mux := http.NewServeMux()
	for _, path := range auth.MetadataPaths(resource) {
		mux.Handle(path, auth.MetadataHandler(resource, "https://issuer.example"))
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		p, ch := authn.Authenticate(r)
		if ch != nil {
			ch.SetHeaders(w.Header())
			w.WriteHeader(ch.Status)
			return
		}
		if !p.HasScope(auth.ScopeRun) {
			ch := authn.InsufficientScope(r, p, auth.ScopeRun)
			ch.SetHeaders(w.Header())
			w.WriteHeader(ch.Status)
			return
		}
		fmt.Fprintln(w, "hello", p.OrgID)
	})

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	// Output: 401 Bearer resource_metadata="https://kadu.example/.well-known/oauth-protected-resource/mcp", scope="kadu.read"
}

func ExampleAuthenticator_InsufficientScope() {
	authn := auth.NewAuthenticator(nil, "https://kadu.example/mcp", nil)
	ch := authn.InsufficientScope(nil, &auth.Principal{Role: auth.RoleMember, Scopes: []string{auth.ScopeWrite}}, auth.ScopeAdmin)
	fmt.Println(ch.Status)
	fmt.Println(ch.Header)
	// Output:
	// 403
	// Bearer error="insufficient_scope", scope="kadu.admin kadu.read kadu.run kadu.write", resource_metadata="https://kadu.example/.well-known/oauth-protected-resource/mcp", error_description="this operation requires the kadu.admin scope"
}

func ExampleMetadataPaths() {
	fmt.Println(auth.MetadataPaths("https://kadu.example/mcp"))
	// Output: [/.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource]
}
