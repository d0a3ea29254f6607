package plugin

import (
	"fmt"
	"slices"

	"github.com/kobana/kadu/core/mcp"
)

// snapshot is what the Registry serves at one moment: the published
// versions and the catalogue entries they own. Immutable once published,
// so calls read it without locks.
type snapshot struct {
	closed   bool
	versions []*version // in configuration order
	order    map[*version]int
	byName   map[string]*version

	tools     map[string]toolRef
	resources map[string]resourceRef
	templates []templateRef
	prompts   map[string]*version

	// The lists the Catalog returns; the engine reads them, never writes.
	toolList     []mcp.Tool
	resourceList []mcp.Resource
	templateList []mcp.ResourceTemplate
	promptList   []mcp.Prompt

	aud audiences // who sees the restricted versions (audience.go)
}

type toolRef struct {
	v   *version
	def *toolDef
}

type resourceRef struct {
	v   *version
	res mcp.Resource
}

type templateRef struct {
	v   *version
	def *templateDef
}

func newSnapshot() *snapshot {
	return &snapshot{
		order: map[*version]int{}, byName: map[string]*version{}, tools: map[string]toolRef{},
		resources: map[string]resourceRef{}, prompts: map[string]*version{},
	}
}

// conflicts reports the first name v would take from a version already in
// s: tool and prompt names, resource URIs and templates are unique across
// bundles.
func (s *snapshot) conflicts(v *version) error {
	for _, t := range v.man.tools {
		if o, ok := s.tools[t.tool.Name]; ok {
			return fmt.Errorf("tool %q is already served by bundle %s; tool names must be unique across bundles", t.tool.Name, o.v.id)
		}
	}
	for _, r := range v.man.resources {
		if o, ok := s.resources[r.URI]; ok {
			return fmt.Errorf("resource %q is already served by bundle %s", r.URI, o.v.id)
		}
	}
	for _, t := range v.man.templates {
		for _, o := range s.templates {
			if o.def.entry.URITemplate == t.entry.URITemplate {
				return fmt.Errorf("resource template %q is already served by bundle %s", t.entry.URITemplate, o.v.id)
			}
		}
	}
	for _, p := range v.man.prompts {
		if o, ok := s.prompts[p.Name]; ok {
			return fmt.Errorf("prompt %q is already served by bundle %s; prompt names must be unique across bundles", p.Name, o.id)
		}
	}
	return nil
}

// add puts v in s at configuration position pos, or says which name of
// another bundle it would take.
func (s *snapshot) add(v *version, pos int) error {
	if err := s.conflicts(v); err != nil {
		return err
	}
	s.versions = append(s.versions, v)
	s.order[v] = pos
	s.byName[v.cfg.Name] = v
	for _, t := range v.man.tools {
		s.tools[t.tool.Name] = toolRef{v: v, def: t}
	}
	for _, r := range v.man.resources {
		s.resources[r.URI] = resourceRef{v: v, res: r}
	}
	for _, t := range v.man.templates {
		s.templates = append(s.templates, templateRef{v: v, def: t})
	}
	for _, p := range v.man.prompts {
		s.prompts[p.Name] = v
	}
	return nil
}

// seal orders everything by configuration position and builds the lists.
func (s *snapshot) seal() *snapshot {
	slices.SortStableFunc(s.versions, func(a, b *version) int { return s.order[a] - s.order[b] })
	slices.SortStableFunc(s.templates, func(a, b templateRef) int { return s.order[a.v] - s.order[b.v] })
	var all view
	for _, v := range s.versions {
		all.add(v)
	}
	s.toolList, s.resourceList, s.templateList, s.promptList = all.tools, all.resources, all.templates, all.prompts
	return s
}

// has reports whether v is published in s.
func (s *snapshot) has(v *version) bool {
	_, ok := s.order[v]
	return ok
}

// resolveURI finds the version serving uri: a fixed resource first, then
// the first template, in configuration order, that matches it.
func (s *snapshot) resolveURI(uri string) (*version, mcp.Access, bool) {
	if r, ok := s.resources[uri]; ok {
		return r.v, r.res.Access, true
	}
	for _, t := range s.templates {
		if t.def.match(uri) {
			return t.v, t.def.entry.Access, true
		}
	}
	return nil, mcp.Access{}, false
}
