package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/route"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Route classes (core/api/routeclass) bound what each operation of a
// bundle may call through api(), whatever routes it was granted: the host
// decides from the manifest's annotations, which are also what decides
// whether the person confirms a tool call (core/confirm), so no operation
// reaches a destructive route without the person's confirmation.
//
//   - a tool with readOnlyHint true, resources/read, prompts/get and
//     completion/complete: read routes only;
//   - a tool that is not destructive: read and write routes;
//   - a tool with destructiveHint true (or no hints: the protocol's
//     default): every granted route.
//
// A request that is no route of the API counts as destructive: the host
// fails closed.

// toolClass is the highest route class a tool may call, from its
// annotations as the host completed them.
func toolClass(a *mcp.ToolAnnotations) routeclass.Class {
	switch {
	case a == nil || a.DestructiveHint:
		return routeclass.Destructive
	case a.ReadOnlyHint:
		return routeclass.Read
	}
	return routeclass.Write
}

// effectiveHints are readOnlyHint and destructiveHint as the host reads a
// manifest's annotations (manifest.EffectiveHints).
func effectiveHints(a *ManifestAnnotations) (readOnly, destructive bool) {
	return manifest.EffectiveHints(a)
}

// requestClass is the class of an api() request; a method and path that
// are no route of the API count as destructive.
func (v *version) requestClass(method, target string) routeclass.Class {
	segs, err := route.Segments(target)
	if err != nil {
		return routeclass.Destructive
	}
	if c := v.classes.Of(method, segs); c != routeclass.Unknown {
		return c
	}
	return routeclass.Destructive
}

// checkClass refuses, as route_not_granted, a granted request whose class
// is above what the running operation may call, and logs it (never the
// body or the query, which may carry data).
func (inv *invocation) checkClass(ctx context.Context, method, path string) (int, []byte, bool) {
	v := inv.v
	c := v.requestClass(method, path)
	if c <= inv.allow {
		return 0, nil, true
	}
	route := trimQuery(path)
	v.log.LogAttrs(ctx, slog.LevelWarn, "bundle api call refused: route class above the operation's",
		slog.String("op", inv.op), slog.String("target", inv.target), slog.String("method", method),
		slog.String("route", route), slog.String("route_class", c.String()),
		slog.String("allowed", inv.allow.String()), slog.String("org", inv.p.OrgID), slog.String("request_id", inv.reqID))
	status, body := refusal(inv, http.StatusForbidden, "route_not_granted", "Route not granted",
		fmt.Sprintf("%s %s is a %s route; %s may only call %s.", method, route, c, operationName(inv.op), allowedRoutes(inv.allow)),
		classHint(c))
	return status, body, false
}

// operationName names an operation for a refusal's detail.
func operationName(op string) string {
	switch op {
	case opToolsCall:
		return "this tool"
	case opReadResource:
		return "resources/read"
	case opPromptsGet:
		return "prompts/get"
	case opComplete:
		return "completion/complete"
	}
	return op
}

func allowedRoutes(c routeclass.Class) string {
	switch c {
	case routeclass.Read:
		return "read routes"
	case routeclass.Write:
		return "read and write routes"
	}
	return "no route"
}

// classHint tells the bundle's author what to change.
func classHint(c routeclass.Class) string {
	if c == routeclass.Destructive {
		return "Call it from a tool annotated destructiveHint: true, which the person confirms before it runs (sdk/ABI.md, Route classes)."
	}
	return "Call it from a tool that is not readOnlyHint: true; resources, prompts and completions may only read (sdk/ABI.md, Route classes)."
}

// UnusableRoute is a route a manifest declares that none of its operations
// may call: every call of it would be refused.
type UnusableRoute struct {
	Route string // as the manifest wrote it
	Class string // "read", "write", "destructive" or "unknown" (no route of the API)
	// Reason says what to change, for a person.
	Reason string
}

// UnusableRoutes returns the routes of m that no operation of m may call
// under the route classes (sdk/ABI.md): a destructive route in a bundle
// with no destructive tool, a write route in one whose tools all only
// read, or a route that is no route of the API. `kadu plugins validate`
// prints them as warnings; the bundle still loads.
func UnusableRoutes(m *Manifest) []UnusableRoute {
	most := routeclass.Unknown
	if len(m.Resources)+len(m.ResourceTemplates)+len(m.Prompts) > 0 || m.Completions {
		most = routeclass.Read
	}
	for _, t := range m.Tools {
		readOnly, destructive := effectiveHints(t.Annotations)
		most = max(most, toolClass(&mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: destructive}))
	}
	tab := routeclass.New()
	var out []UnusableRoute
	for _, s := range m.Routes {
		p, err := route.Parse(s)
		if err != nil {
			continue // Validate reported it
		}
		method, segs, params := p.Parts()
		c := tab.OfPattern(method, segs, params)
		switch {
		case c == routeclass.Unknown:
			out = append(out, UnusableRoute{Route: s, Class: c.String(),
				Reason: "it is no route of the Kadu API (sdk/ABI.md lists them); every call of it fails"})
		case c > most && c == routeclass.Destructive:
			out = append(out, UnusableRoute{Route: s, Class: c.String(),
				Reason: "it is destructive and no tool of the bundle is annotated destructiveHint: true, so every call of it is refused; annotate the tool that calls it destructive or drop the route"})
		case c > most:
			out = append(out, UnusableRoute{Route: s, Class: c.String(),
				Reason: "it is a write and every operation of the bundle only reads, so every call of it is refused; drop readOnlyHint from the tool that calls it or drop the route"})
		}
	}
	return out
}
