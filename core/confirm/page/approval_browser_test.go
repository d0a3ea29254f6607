package page

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/internal/browsertest"
)

// TestApprovalPageInChromium drives the page in headless Chromium: sign in
// through the embedded authorization server's consent page, read the
// approval, press Continue, see the outcome; then a second person signing
// in is refused. It saves screenshots of the approval page and of the
// outcome in the test's temporary directory (core/app's browser test, on
// the whole product, writes the ones in docs/clients).
func TestApprovalPageInChromium(t *testing.T) {
	browser := browsertest.Start(t)
	env := newEnv(t, nil)
	// The consent page offers dev-user in org_dev: the requester.
	a := env.pending("dev-user", "org_dev")
	other := env.pending("dev-user", "org_dev")

	// Sign in: the page sends the browser to the consent page; press Approve.
	browser.SignIn(env.srv.URL + approvePath + a.ID)
	browser.WantTexts(map[string]string{
		"what":    "Run task Conciliação diária with 2 input files",
		"client":  "MCP Inspector",
		"org":     "org_dev",
		"tool":    "Run a task",
		"subject": "dev-user",
	})
	browser.Screenshot(filepath.Join(t.TempDir(), "approval-page.png"))

	// Continue: the operation runs once and the page shows its outcome.
	heading, result := browser.Continue()
	if heading != "Done" || !strings.Contains(result, "exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d") || !strings.Contains(result, "queued") {
		t.Errorf("outcome: heading %q, result %q; want Done with the execution id and status", heading, result)
	}
	if n := env.approvals.runCount(a.ID); n != 1 {
		t.Errorf("runs = %d after Continue, want 1", n)
	}
	browser.Screenshot(filepath.Join(t.TempDir(), "approval-outcome.png"))

	// A second person, in a browser profile of their own, is refused.
	refusal := browser.Person().SignInAs(env.srv.URL+approvePath+other.ID, "mallory")
	if !strings.Contains(refusal, "This approval is not yours") || !strings.Contains(refusal, "signed in as mallory") {
		t.Errorf("second person sees %q, want a refusal", refusal)
	}
	if n, st := env.approvals.runCount(other.ID), env.approvals.get(other.ID).Status; n != 0 || st != "pending" {
		t.Errorf("after the refusal: runs %d, status %s; want nothing changed", n, st)
	}
}
