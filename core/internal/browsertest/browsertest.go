// Package browsertest drives headless Chromium for the tests of the
// approval page: core/confirm/page's, on the page alone, and core/app's, on
// the whole product. Both walk the same flow, so it is written once here.
//
// It owns: finding the binary (CHROMIUM_PATH, then the usual names on
// PATH), starting it with a profile of the test's own and stopping it when
// the test ends, a budget for every step that fails the test naming the
// step (not the -timeout of the whole run), and the steps of the approval
// flow (sign in on the consent page, read the page, press Continue, be
// refused as someone else), which rest on the element ids of the approval
// page's templates (core/confirm/page/templates).
//
// It must not: be imported by production code, or fail a test on a machine
// without Chromium (it skips, saying how to install it).
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Budgets. A step waits for what a person would see next; on a busy
// two-core machine that takes a few seconds, never a minute.
const (
	startBudget = 2 * time.Minute
	stepBudget  = time.Minute
)

// Browser is one browser profile (its own cookies) in a running Chromium.
type Browser struct {
	t   *testing.T
	ctx context.Context // a chromedp tab; steps derive their budgets from it
}

// Start starts headless Chromium for t, stopped when t ends; it skips t
// when there is no Chromium.
func Start(t *testing.T) *Browser {
	t.Helper()
	exe := chromiumPath()
	if exe == "" {
		t.Skip("no Chromium binary found (looked for chromium, chromium-browser, google-chrome): " +
			"install it with `apt-get update && apt-get install -y chromium`, or set CHROMIUM_PATH")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(900, 1000),
			chromedp.UserDataDir(t.TempDir()))...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	open(browser, t, "starting "+exe)
	return &Browser{t: t, ctx: browser}
}

// Person returns a browser profile of another person in the same
// Chromium: no cookies in common with b.
func (b *Browser) Person() *Browser {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	open(ctx, b.t, "opening a browser profile")
	return &Browser{t: b.t, ctx: ctx}
}

// open runs the first action on a new chromedp context, which starts
// Chromium or opens the tab. What it starts lives as long as the context
// that first action ran on, so that context cannot carry the budget (every
// later step would find the tab gone): the budget is kept here instead.
func open(ctx context.Context, t *testing.T, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(startBudget):
		t.Fatalf("%s: no answer from Chromium within %s", what, startBudget) // the cleanups stop it
	}
}

// Do runs steps as one step of the test, named what, within its budget.
func (b *Browser) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepBudget)
	defer cancel()
	b.check(what, chromedp.Do(ctx, steps...))
}

// Text returns the text of the element with id.
func (b *Browser) Text(id string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepBudget)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
	b.check("read #"+id, err)
	return text
}

// WantTexts fails t (without stopping it) for each element id whose text
// does not contain want.
func (b *Browser) WantTexts(want map[string]string) {
	b.t.Helper()
	for id, w := range want {
		if got := b.Text(id); !strings.Contains(got, w) {
			b.t.Errorf("#%s reads %q, want %q", id, got, w)
		}
	}
}

// Screenshot saves the whole page as a PNG at path and logs where.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepBudget)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	b.check("screenshot", err)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		b.t.Fatalf("saving the screenshot: %v", err)
	}
	b.t.Logf("screenshot: %s", path)
}

// SignIn opens an approval link and approves the sign-in the consent page
// offers, which lands on the approval page (its Continue button).
func (b *Browser) SignIn(link string) {
	b.t.Helper()
	b.Do("open the approval link and approve the sign-in",
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`button[value="approve"]`)),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.ID("continue")),
	)
}

// Continue presses Continue on the approval page and returns the outcome
// page's heading and main text.
func (b *Browser) Continue() (heading, main string) {
	b.t.Helper()
	b.Do("press Continue", chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.ID("heading")))
	return b.Text("heading"), b.Text("main")
}

// SignInAs opens an approval link and signs in as subject instead of the
// person the consent page offers; it returns the main text of the page
// that follows.
func (b *Browser) SignInAs(link, subject string) string {
	b.t.Helper()
	b.Do("sign in as "+subject,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`input[name="subject"]`)),
		chromedp.SetValue(chromedp.CSS(`input[name="subject"]`), subject),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.ID("heading")),
	)
	return b.Text("main")
}

// check fails t for a step that went wrong, saying when it was the budget.
func (b *Browser) check(what string, err error) {
	b.t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		b.t.Fatalf("%s: not done within %s (the page never showed what the step waits for): %v", what, stepBudget, err)
	default:
		b.t.Fatalf("%s: %v", what, err)
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
