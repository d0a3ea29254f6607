package kadu

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Resource is a document at a fixed URI, e.g. "kobana://kadu/usage".
type Resource struct {
	URI         string // absolute, unique across the server's bundles
	Name        string
	Title       string
	Description string
	MIMEType    string // e.g. "application/json"; the default of each content's MIMEType
	Access      Access
	// Read returns the document. A content whose URI is empty gets the
	// resource's URI, and whose MIMEType is empty the resource's.
	Read func(c *Call) ([]ResourceContents, error)
}

// ResourceTemplate is a family of documents named by a URI template
// (RFC 6570 level 1), e.g. "kobana://kadu/tasks/{id}".
type ResourceTemplate struct {
	URITemplate string // each {name} matches one or more characters other than / ? #
	Name        string
	Title       string
	Description string
	MIMEType    string
	Access      Access
	// Read returns the document at uri; vars holds the template's
	// variables, percent-decoded. Return ErrResourceNotFound (or the API's
	// 404 as an *APIError) when it does not exist for this caller.
	Read func(c *Call, uri string, vars map[string]string) ([]ResourceContents, error)
}

// ResourceContents is one text (or binary) content of a document.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"` // sent as base64
}

func (res Resource) addTo(r *registry) error {
	var errs []error
	if u, err := url.Parse(res.URI); err != nil || !u.IsAbs() {
		errs = append(errs, errors.New("URI: want an absolute URI"))
	} else if r.resources[res.URI] != nil {
		errs = append(errs, errors.New("URI: registered twice"))
	}
	if res.Name == "" {
		errs = append(errs, errors.New("Name: required"))
	}
	if err := res.Access.check(); err != nil {
		errs = append(errs, err)
	}
	if res.Read == nil {
		errs = append(errs, errors.New("Read: required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("resource %q: %w", res.URI, err)
	}
	r.m.Resources = append(r.m.Resources, manifest.Resource{URI: res.URI, Name: res.Name, Title: res.Title,
		Description: res.Description, MIMEType: res.MIMEType, Access: res.Access.def()})
	r.resources[res.URI] = &res
	return nil
}

// templateEntry is a registered template with its matcher.
type templateEntry struct {
	t    *ResourceTemplate
	tmpl *manifest.Template
	vars []string
}

// compileTemplate checks a level-1 URI template by the host's rule
// (manifest.ParseTemplate) and returns its matcher.
func compileTemplate(tmpl string) (*manifest.Template, error) {
	tm, err := manifest.ParseTemplate(tmpl)
	if err != nil {
		return nil, fmt.Errorf("URITemplate: %w", err)
	}
	if len(tm.Vars()) == 0 {
		return nil, errors.New("URITemplate: has no {name}; use a Resource for a fixed URI")
	}
	return tm, nil
}

func (t ResourceTemplate) addTo(r *registry) error {
	var errs []error
	tm, err := compileTemplate(t.URITemplate)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range r.templates {
		if e.t.URITemplate == t.URITemplate {
			errs = append(errs, errors.New("URITemplate: registered twice"))
		}
	}
	if t.Name == "" {
		errs = append(errs, errors.New("Name: required"))
	}
	if err := t.Access.check(); err != nil {
		errs = append(errs, err)
	}
	if t.Read == nil {
		errs = append(errs, errors.New("Read: required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("resource template %q: %w", t.URITemplate, err)
	}
	r.m.ResourceTemplates = append(r.m.ResourceTemplates, manifest.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name,
		Title: t.Title, Description: t.Description, MIMEType: t.MIMEType, Access: t.Access.def()})
	r.templates = append(r.templates, &templateEntry{t: &t, tmpl: tm, vars: tm.Vars()})
	return nil
}

// match returns the template's variables for uri, percent-decoded, or
// false.
func (e *templateEntry) match(uri string) (map[string]string, bool) {
	values, ok := e.tmpl.Values(uri)
	if !ok {
		return nil, false
	}
	vars := make(map[string]string, len(e.vars))
	for i, name := range e.vars {
		v, err := url.PathUnescape(values[i])
		if err != nil {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}
