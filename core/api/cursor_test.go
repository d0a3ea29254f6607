package api

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestCursors(t *testing.T) {
	c := cursors{key: []byte("0123456789abcdef0123456789abcdef")}
	cur := c.encode("exe_0193", "GET /executions status=failed")
	if after, err := c.decode(cur, "GET /executions status=failed"); err != nil || after != "exe_0193" {
		t.Fatalf("decode = %q, %v", after, err)
	}
	payload, sig, _ := strings.Cut(cur, ".")
	forged := c.encode("exe_9999", "GET /executions status=failed")
	fPayload, _, _ := strings.Cut(forged, ".")
	other := cursors{key: []byte("another key, another replica set")}
	for name, bad := range map[string]string{
		"other filters":         cur,
		"tampered payload":      fPayload + "." + sig,
		"truncated signature":   payload + "." + sig[:10],
		"garbage":               "not-a-cursor",
		"empty":                 "",
		"signed with other key": other.encode("exe_0193", "GET /executions status=failed"),
	} {
		filters := "GET /executions status=failed"
		if name == "other filters" {
			filters = "GET /executions status=succeeded"
		}
		_, err := c.decode(bad, filters)
		var ae *Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Problems[0].Code != "invalid_cursor" || *ae.Problems[0].Param != "cursor" {
			t.Errorf("%s: decode error = %v, want 400 invalid_cursor", name, err)
		}
	}
}
