package main

import "testing"

// TestRunGivesTheCommandACluster: the command sees PGTEST_DSN naming a
// postgres:// server and its exit status is withcluster's.
func TestRunGivesTheCommandACluster(t *testing.T) {
	script := `case "$PGTEST_DSN" in postgres://*) exit 7;; *) echo "PGTEST_DSN=$PGTEST_DSN"; exit 1;; esac`
	if code := run([]string{"--", "sh", "-c", script}); code != 7 {
		t.Errorf("withcluster -- sh -c …: exit %d, want the command's 7 (PGTEST_DSN set to the cluster)", code)
	}
}

func TestRunWithoutCommand(t *testing.T) {
	if code := run(nil); code != 2 {
		t.Errorf("withcluster with no command: exit %d, want 2 (usage)", code)
	}
}
