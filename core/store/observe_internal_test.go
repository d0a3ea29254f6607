package store

import "testing"

func TestParseOperation(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"SELECT id, status FROM executions WHERE org_id = $1", "select executions"},
		{"\n\tselect count(*)\n\tfrom webhook_deliveries d join webhooks w on true", "select webhook_deliveries"},
		{"INSERT INTO events(id, org_id) VALUES ($1, $2)", "insert events"},
		{"UPDATE executions SET status = $1", "update executions"},
		{"DELETE FROM idempotency_keys WHERE expires_at < $1", "delete idempotency_keys"},
		{"insert into public.orgs (id) values ($1)", "insert orgs"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "with"},
		{"SELECT 1", "select"},
		{"", "unknown"},
	} {
		if got := parseOperation(tc.query); got != tc.want {
			t.Errorf("parseOperation(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}
