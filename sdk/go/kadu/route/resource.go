package route

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// ResourceSpec describes a document that is the JSON of a GET route, e.g.
// "kobana://kadu/tasks/{id}" for "GET /api/v1/tasks/{id}".
type ResourceSpec struct {
	// URI is a fixed URI, or a URI template whose {name} variables fill the
	// route's parameters of the same name.
	URI         string
	Name        string
	Title       string
	Description string
	Route       string // a GET route
	Access      kadu.Access
}

// Resource returns the kadu.Resource (fixed URI) or kadu.ResourceTemplate
// (URI with variables) that s describes, with MIME type application/json.
// Reading it answers the route's JSON; the API's 404 becomes "Resource not
// found". Resource panics on a malformed or non-GET Route.
func Resource(s ResourceSpec) kadu.Feature {
	r := mustParse(s.Route)
	if r.method != "GET" {
		panic(fmt.Sprintf("route: resource %q: route %q is not a GET", s.URI, s.Route))
	}
	read := func(c *kadu.Call, uri string, vars map[string]string) ([]kadu.ResourceContents, error) {
		args := Args{}
		for k, v := range vars {
			args[k] = jsonString(v)
		}
		path, _, err := r.request(args, nil)
		if err != nil {
			return nil, kadu.ErrResourceNotFound // a variable that cannot name anything
		}
		resp, err := c.API("GET", path, nil)
		if err != nil {
			return nil, err
		}
		if err := resp.Err(); err != nil {
			return nil, err
		}
		return []kadu.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(bytes.TrimSpace(resp.Body))}}, nil
	}
	if !strings.Contains(s.URI, "{") {
		return kadu.Resource{URI: s.URI, Name: s.Name, Title: s.Title, Description: s.Description,
			MIMEType: "application/json", Access: s.Access,
			Read: func(c *kadu.Call) ([]kadu.ResourceContents, error) { return read(c, s.URI, nil) }}
	}
	return kadu.ResourceTemplate{URITemplate: s.URI, Name: s.Name, Title: s.Title, Description: s.Description,
		MIMEType: "application/json", Access: s.Access, Read: read}
}
