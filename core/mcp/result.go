package mcp

import "maps"

// decorations are the era-2026 members every result carries (docs/reference/mcp.md#result-decorations).
// Result types embed them; in era 2025 they stay empty and are omitted.
type decorations struct {
	ResultType string         `json:"resultType,omitempty"`
	TTLMs      *int           `json:"ttlMs,omitempty"`
	CacheScope string         `json:"cacheScope,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

func (d *decorations) decor() *decorations { return d }

// decorable is a result with embedded decorations.
type decorable interface{ decor() *decorations }

var zeroTTL = 0

// decorate fills the era-2026 decorations of result; era-2025 results
// carry none of them (docs/reference/mcp.md#order-of-checks).
func (e *Engine) decorate(x *exchange, result decorable) decorable {
	if x.client.Era != Era2026 {
		return result
	}
	d := result.decor()
	if d.ResultType == "" {
		d.ResultType = "complete"
	}
	meta := make(map[string]any, len(d.Meta)+1)
	maps.Copy(meta, d.Meta)
	meta[MetaServerInfo] = e.server
	d.Meta = meta
	if cacheable[x.msg.method] && d.ResultType == "complete" {
		d.TTLMs, d.CacheScope = &zeroTTL, "private"
	}
	return result
}
