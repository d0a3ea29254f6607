package route

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// Conventions of the Kadu API (docs/reference/rest.md#conventions) as schema properties, so that
// every tool describes them the same way.
var (
	// IdempotencyKey is the idempotency_key every write accepts.
	IdempotencyKey = kadu.Property{Name: "idempotency_key", Schema: `{"type":"string","minLength":1,"maxLength":255,` +
		`"description":"Optional. Any unique string (e.g. a UUID) for this one operation. Sending the same call again with the same key returns the first answer instead of doing it twice; use a new key for a new operation."}`}
	// Limit is the page size of a list.
	Limit = kadu.Property{Name: "limit", Schema: `{"type":"integer","minimum":1,"maximum":100,` +
		`"description":"How many items to return, 1 to 100 (default 20)."}`}
	// Cursor continues a list.
	Cursor = kadu.Property{Name: "cursor", Schema: `{"type":"string","minLength":1,` +
		`"description":"Opaque cursor from meta.next_cursor of the previous page, to get the next one. Keep the same filters."}`}
)

// isIDPrefix reports whether prefix is lowercase letters and a final _
// (^[a-z]+_$), checked by hand: route.ID runs inside _initialize.
func isIDPrefix(prefix string) bool {
	letters, ok := strings.CutSuffix(prefix, "_")
	if !ok || letters == "" {
		return false
	}
	for i := 0; i < len(letters); i++ {
		if letters[i] < 'a' || letters[i] > 'z' {
			return false
		}
	}
	return true
}

// ID returns the required property name holding an id with prefix (e.g.
// "tsk_"): the prefix and 32 lowercase hex digits. what says what it names,
// e.g. "The task's id".
func ID(name, prefix, what string) kadu.Property {
	if !isIDPrefix(prefix) {
		panic(fmt.Sprintf("route.ID: prefix %q: want lowercase letters and a final _", prefix))
	}
	desc, _ := json.Marshal(fmt.Sprintf("%s (%s followed by 32 hex digits).", strings.TrimSuffix(what, "."), prefix))
	return kadu.Property{Name: name, Required: true,
		Schema: fmt.Sprintf(`{"type":"string","pattern":"^%s[0-9a-f]{32}$","description":%s}`, prefix, desc)}
}

// ListSchema returns the output schema of a list route: {"data": [item…],
// "meta": {"next_cursor", "limit"}}. item is the JSON Schema of one item.
func ListSchema(item string) json.RawMessage {
	if !json.Valid([]byte(item)) {
		panic("route.ListSchema: item is not valid JSON")
	}
	return json.RawMessage(`{"type":"object","properties":{` +
		`"data":{"type":"array","items":` + item + `},` +
		`"meta":{"type":"object","properties":{"next_cursor":{"type":["string","null"],"description":"Pass as cursor to get the next page; null on the last page."},"limit":{"type":"integer"}},"required":["next_cursor","limit"]}},` +
		`"required":["data","meta"]}`)
}

// jsonString returns s as a JSON string.
func jsonString(s string) json.RawMessage { return wire.AppendString(nil, []byte(s)) }
