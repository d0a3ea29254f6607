package page

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestApprovalPageInChromium drives the page in headless Chromium: sign in
// through the embedded authorization server's consent page, read the
// approval, press Continue, see the outcome; then a second person signing
// in is refused. It saves screenshots of the approval page and of the
// outcome in the test's temporary directory (core/app's browser test, on
// the whole product, writes the ones in docs/clients).
func TestApprovalPageInChromium(t *testing.T) {
	exe := chromiumPath()
	if exe == "" {
		t.Skip("no Chromium binary found (looked for chromium, chromium-browser, google-chrome): " +
			"install it with `apt-get update && apt-get install -y chromium`, or set CHROMIUM_PATH")
	}
	env := newEnv(t, nil)
	// The consent page offers dev-user in org_dev: the requester.
	a := env.pending("dev-user", "org_dev")
	other := env.pending("dev-user", "org_dev")

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(900, 1000),
			chromedp.UserDataDir(t.TempDir()))...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil { // starts Chromium; no timeout on this context
		t.Fatalf("starting %s: %v", exe, err)
	}
	ctx, cancel := context.WithTimeout(browser, time.Minute)
	defer cancel()

	// Sign in: the page sends the browser to the consent page; press Approve.
	must(t, "open the approval link and approve the sign-in", chromedp.Do(ctx,
		chromedp.Navigate(env.srv.URL+approvePath+a.ID),
		chromedp.WaitVisible(chromedp.CSS(`button[value="approve"]`)),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.ID("continue")),
	))
	for id, want := range map[string]string{
		"what":    "Run task Conciliação diária with 2 input files",
		"client":  "MCP Inspector",
		"org":     "org_dev",
		"tool":    "Run a task",
		"subject": "dev-user",
	} {
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		must(t, "read #"+id, err)
		if !strings.Contains(got, want) {
			t.Errorf("#%s reads %q, want %q", id, got, want)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, "screenshot", err)
	path := filepath.Join(t.TempDir(), "approval-page.png")
	must(t, "save the screenshot", os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot of the approval page: %s", path)

	// Continue: the operation runs once and the page shows its outcome.
	must(t, "press Continue", chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("continue")),
		chromedp.WaitVisible(chromedp.ID("heading")),
	))
	heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("heading")))
	must(t, "read the outcome", err)
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("main")))
	must(t, "read the result", err)
	if heading != "Done" || !strings.Contains(result, "exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d") || !strings.Contains(result, "queued") {
		t.Errorf("outcome: heading %q, result %q; want Done with the execution id and status", heading, result)
	}
	if n := env.approvals.runCount(a.ID); n != 1 {
		t.Errorf("runs = %d after Continue, want 1", n)
	}
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, "screenshot", err)
	must(t, "save the screenshot", os.WriteFile(filepath.Join(t.TempDir(), "approval-outcome.png"), shot, 0o644))

	// A second person, in a browser profile of their own, is refused.
	second, cancelSecond := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancelSecond()
	ctx2, cancel2 := context.WithTimeout(second, time.Minute)
	defer cancel2()
	must(t, "sign in as someone else", chromedp.Do(ctx2,
		chromedp.Navigate(env.srv.URL+approvePath+other.ID),
		chromedp.WaitVisible(chromedp.CSS(`input[name="subject"]`)),
		chromedp.SetValue(chromedp.CSS(`input[name="subject"]`), "mallory"),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.ID("heading")),
	))
	refusal, err := chromedp.Run(ctx2, chromedp.Text(chromedp.ID("main")))
	must(t, "read the refusal", err)
	if !strings.Contains(refusal, "This approval is not yours") || !strings.Contains(refusal, "signed in as mallory") {
		t.Errorf("second person sees %q, want a refusal", refusal)
	}
	if n, st := env.approvals.runCount(other.ID), env.approvals.get(other.ID).Status; n != 0 || st != "pending" {
		t.Errorf("after the refusal: runs %d, status %s; want nothing changed", n, st)
	}
}

// chromiumPath finds a Chromium or Chrome binary: CHROMIUM_PATH, then the
// usual names on PATH. "" when there is none.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
