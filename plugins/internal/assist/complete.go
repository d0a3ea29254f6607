package assist

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// Item is what completions read of a list route's item.
type Item struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// page is one page of a list route (docs/reference/rest.md#conventions).
type page struct {
	Data []Item `json:"data"`
	Meta struct {
		NextCursor *string `json:"next_cursor"`
	} `json:"meta"`
}

// Complete asks the list route at path (with its query, without limit) for
// one page of kadu.MaxCompletionValues items, newest first as the API
// sorts them, and returns value(item) for each item keep accepts, in that
// order. HasMore is set when the API has another page; Total only when it
// does not (then every match is known).
//
// The request goes as the caller, so the values are only what the caller
// may see; an API refusal (a caller without the scope) gives no values.
func Complete(c *kadu.Call, path string, keep func(Item) bool, value func(Item) string) (kadu.CompleteResult, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	resp, err := c.API("GET", path+sep+"limit="+url.QueryEscape("100"), nil)
	if err != nil {
		return kadu.CompleteResult{}, err
	}
	if resp.Status == 403 || resp.Status == 404 {
		return kadu.CompleteResult{}, nil
	}
	if err := resp.Err(); err != nil {
		return kadu.CompleteResult{}, err
	}
	var p page
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		return kadu.CompleteResult{}, err
	}
	res := kadu.CompleteResult{Values: []string{}, HasMore: p.Meta.NextCursor != nil}
	seen := map[string]bool{}
	for _, it := range p.Data {
		if v := value(it); keep(it) && v != "" && !seen[v] {
			seen[v] = true
			res.Values = append(res.Values, v)
		}
	}
	if len(res.Values) > kadu.MaxCompletionValues {
		res.Values, res.HasMore = res.Values[:kadu.MaxCompletionValues], true
	}
	if !res.HasMore {
		res.Total = len(res.Values)
	}
	return res, nil
}

// IDPrefix keeps the items whose id starts with typed, ignoring case.
func IDPrefix(typed string) func(Item) bool {
	typed = strings.ToLower(strings.TrimSpace(typed))
	return func(it Item) bool { return strings.HasPrefix(strings.ToLower(it.ID), typed) }
}

// ItemID is the item's id.
func ItemID(it Item) string { return it.ID }
