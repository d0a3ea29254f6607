package canonjson

import (
	"encoding/json"
	"testing"
)

func TestDigest(t *testing.T) {
	base, err := Digest(json.RawMessage(`{"id":"tsk_1","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := Digest(json.RawMessage(`{}`))
	tests := []struct {
		name string
		args string
		want string
	}{
		{"reordered, 1.0 for 1, spaces", `{ "n": 1.0, "id": "tsk_1" }`, base},
		{"no arguments are {}", ``, empty},
		{"empty object", `{}`, empty},
	}
	for _, tt := range tests {
		got, err := Digest(json.RawMessage(tt.args))
		if err != nil || got != tt.want {
			t.Errorf("%s: Digest = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
	if other, _ := Digest(json.RawMessage(`{"id":"tsk_2","n":1}`)); other == base {
		t.Error("other arguments digest alike")
	}
	if _, err := Digest(json.RawMessage(`{"n":1e400}`)); err == nil {
		t.Error("a number out of double range digested")
	}
}
