package route

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func args(t testing.TB, s string) Args {
	t.Helper()
	var a Args
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRequest(t *testing.T) {
	tests := []struct {
		name     string
		route    string
		query    []string
		args     string
		wantPath string
		wantBody string
		wantErr  string // substring of the tool error
	}{
		{name: "path parameter", route: "GET /api/v1/tasks/{id}", args: `{"id":"tsk_1"}`, wantPath: "/api/v1/tasks/tsk_1"},
		{name: "path parameter escaped", route: "GET /api/v1/tasks/{id}", args: `{"id":"a/b c?d#e%"}`, wantPath: "/api/v1/tasks/a%2Fb%20c%3Fd%23e%25"},
		{name: "integer path parameter", route: "GET /api/v1/things/{n}", args: `{"n":42}`, wantPath: "/api/v1/things/42"},
		{name: "query, sorted and encoded", route: "GET /api/v1/executions", args: `{"status":"failed","limit":10,"created_after":"2026-03-01T00:00:00+03:00","q":"a b&c=d"}`,
			wantPath: "/api/v1/executions?created_after=2026-03-01T00%3A00%3A00%2B03%3A00&limit=10&q=a+b%26c%3Dd&status=failed"},
		{name: "boolean and number query", route: "GET /x", args: `{"on":true,"n":-1.5e3}`, wantPath: "/x?n=-1.5e3&on=true"},
		{name: "null query parameter left out", route: "GET /x", args: `{"cursor":null,"limit":5}`, wantPath: "/x?limit=5"},
		{name: "no arguments, no query", route: "GET /api/v1/usage", args: `{}`, wantPath: "/api/v1/usage"},
		{name: "body of the other arguments", route: "POST /api/v1/tasks/{id}/run", args: `{"id":"tsk_1","input":{"b":[1,2],"a":null},"idempotency_key":"k"}`,
			wantPath: "/api/v1/tasks/tsk_1/run", wantBody: `{"idempotency_key":"k","input":{"b":[1,2],"a":null}}`},
		{name: "no body when only the path parameter", route: "DELETE /api/v1/tasks/{id}", args: `{"id":"tsk_1"}`, wantPath: "/api/v1/tasks/tsk_1"},
		{name: "declared query on a write", route: "POST /x/{id}", query: []string{"dry_run"}, args: `{"id":"1","dry_run":true,"name":"n"}`,
			wantPath: "/x/1?dry_run=true", wantBody: `{"name":"n"}`},
		{name: "missing path parameter", route: "GET /api/v1/tasks/{id}", args: `{}`, wantErr: "id is required"},
		{name: "null path parameter", route: "GET /api/v1/tasks/{id}", args: `{"id":null}`, wantErr: "id is required"},
		{name: "empty path parameter", route: "GET /api/v1/tasks/{id}", args: `{"id":""}`, wantErr: "must be an id"},
		{name: "dot-dot path parameter", route: "GET /api/v1/tasks/{id}", args: `{"id":".."}`, wantErr: "must be an id"},
		{name: "object path parameter", route: "GET /api/v1/tasks/{id}", args: `{"id":{"a":1}}`, wantErr: "id must be a string"},
		{name: "array in the query", route: "GET /x", args: `{"ids":["a","b"]}`, wantErr: "ids must be a string, a number or a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(tt.route)
			path, body, err := p.request(args(t, tt.args), tt.query)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("request() error = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || path != tt.wantPath || string(body) != tt.wantBody {
				t.Errorf("request() = %q, %s, %v\nwant        %q, %s", path, body, err, tt.wantPath, tt.wantBody)
			}
		})
	}
}

func TestParseRefusesMalformedRoutes(t *testing.T) {
	for _, rt := range []string{"GET", "get /x", "HEAD /x", "GET x", "GET /x?y=1", "GET /a//b", "GET /a/../b", "GET /a/{id}/{id}", "GET /a/x{id}"} {
		if _, err := parse(rt); err == nil {
			t.Errorf("parse(%q) = nil error; want one", rt)
		}
	}
}

func TestConventionHelpers(t *testing.T) {
	id := ID("id", "tsk_", "The task's id.")
	if !id.Required || id.Schema != `{"type":"string","pattern":"^tsk_[0-9a-f]{32}$","description":"The task's id (tsk_ followed by 32 hex digits)."}` {
		t.Errorf("ID() = %+v", id)
	}
	for _, p := range []string{IdempotencyKey.Schema, Limit.Schema, Cursor.Schema, string(ListSchema(`{"type":"object"}`))} {
		if !json.Valid([]byte(p)) {
			t.Errorf("not JSON: %s", p)
		}
	}
	if Routes(Spec{Route: "GET /a"}, Spec{Route: "POST /a"}, Spec{Route: "GET /a"})[1] != "POST /a" {
		t.Error("Routes() does not keep the first of each, in order")
	}
}

// FuzzRequest checks that whatever the arguments, a request stays on its
// route: the path has as many segments, each literal segment unchanged and
// each parameter one non-empty segment that is not "." or "..", and the
// body, when there is one, is a JSON object.
func FuzzRequest(f *testing.F) {
	f.Add(`{"id":"tsk_1","limit":10}`)
	f.Add(`{"id":"../../admin","q":"a&b"}`)
	f.Add(`{"id":"%2e%2e"}`)
	f.Add(`{"id":12,"input":{"a":[1]}}`)
	f.Add(`{"id":"a/b","x":null}`)
	routes := []parsed{mustParse("GET /api/v1/tasks/{id}"), mustParse("POST /api/v1/tasks/{id}/run")}
	f.Fuzz(func(t *testing.T, raw string) {
		var a Args
		if json.Unmarshal([]byte(raw), &a) != nil {
			return
		}
		for _, r := range routes {
			path, body, err := r.request(a, nil)
			if err != nil {
				continue // a tool error naming the argument
			}
			u, perr := url.Parse(path)
			if perr != nil {
				t.Fatalf("path %q does not parse: %v", path, perr)
			}
			segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
			if len(segs) != len(r.segs) {
				t.Fatalf("path %q has %d segments; the route has %d", path, len(segs), len(r.segs))
			}
			for i, seg := range r.segs {
				if _, isParam := paramName(seg); !isParam && segs[i] != seg {
					t.Fatalf("path %q changed literal segment %q", path, seg)
				}
				dec, _ := url.PathUnescape(segs[i])
				if segs[i] == "" || dec == "." || dec == ".." {
					t.Fatalf("path %q has segment %q", path, segs[i])
				}
			}
			if len(body) > 0 && (body[0] != '{' || !json.Valid(body)) {
				t.Fatalf("body %s is not a JSON object", body)
			}
		}
	})
}

func TestIDPrefix(t *testing.T) {
	for prefix, want := range map[string]bool{"tsk_": true, "exe_": true, "_": false, "tsk": false, "Tsk_": false, "ts1_": false, "tsk__": false, "": false} {
		if got := isIDPrefix(prefix); got != want {
			t.Errorf("isIDPrefix(%q) = %v; want %v", prefix, got, want)
		}
	}
}
