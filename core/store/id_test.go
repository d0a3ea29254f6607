package store

import (
	"slices"
	"strings"
	"testing"
)

func TestNewID(t *testing.T) {
	const n = 1000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = NewID(PrefixExecution)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("ids minted in sequence do not sort in sequence")
	}
	if len(slices.Compact(slices.Clone(ids))) != n {
		t.Errorf("duplicate ids")
	}
	id := ids[0]
	if !strings.HasPrefix(id, "exe_") || len(id) != len("exe_")+32 || id[4+12] != '7' {
		t.Errorf("NewID = %q, want exe_ + 32 hex digits of a UUIDv7", id)
	}
}

func TestValidID(t *testing.T) {
	good := NewID(PrefixTask)
	tests := []struct {
		prefix, id string
		want       bool
	}{
		{PrefixTask, good, true},
		{PrefixExecution, good, false},
		{PrefixTask, "tsk_", false},
		{PrefixTask, good[:len(good)-1], false},
		{PrefixTask, good + "0", false},
		{PrefixTask, strings.ToUpper(good[:4]) + good[4:], false},
		{PrefixTask, "tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8G", false},
		{PrefixTask, "tsk_0193a5c4-e1f2-7c3a-9b1d-2e4f5a6b", false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.prefix, tt.id); got != tt.want {
			t.Errorf("ValidID(%q, %q) = %v, want %v", tt.prefix, tt.id, got, tt.want)
		}
	}
}
