//go:build replicas

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// approver deletes a task from a client that cannot ask in the chat (no
// elicitation): the call answers with an approval link, and the person
// opens it, signs in at the issuer and continues, like a browser would.
// Every step goes through nginx and may reach any replica.
func (w *workload) approver(ctx context.Context, lbURL string) {
	for ctx.Err() == nil {
		args, _ := json.Marshal(map[string]any{"name": w.key("Approved task"), "instructions": "Nothing.", "idempotency_key": w.key("create")})
		a, res, err := w.lb.mcp(w.token, "{}", "tools/call", "kadu_tasks_create", `{"name":"kadu_tasks_create","arguments":`+string(args)+`}`, true)
		w.toolCalls.Add(1)
		var result map[string]any
		if err == nil {
			result, err = toolResult(a, res)
		}
		if err != nil {
			w.rec.fail("kadu_tasks_create: %v", err)
			continue
		}
		id, _ := result["structuredContent"].(map[string]any)["id"].(string)
		del, _ := json.Marshal(map[string]any{"id": id, "idempotency_key": w.key("delete")})
		a, res, err = w.lb.mcp(w.token, "{}", "tools/call", "kadu_tasks_delete", `{"name":"kadu_tasks_delete","arguments":`+string(del)+`}`, true)
		w.toolCalls.Add(1)
		if err == nil {
			result, err = toolResult(a, res)
		}
		if err != nil {
			w.rec.fail("kadu_tasks_delete without elicitation: %v", err)
			continue
		}
		sc, _ := result["structuredContent"].(map[string]any)
		link, _ := sc["approval_url"].(string)
		if sc["status"] != "approval_required" || !strings.HasPrefix(link, lbURL+"/approve/") {
			w.rec.fail("kadu_tasks_delete without elicitation: no approval link: %s", clip(a.body))
			continue
		}
		if err := w.approve(link, lbURL); err != nil {
			w.rec.fail("approval page %s: %v", link, err)
			continue
		}
		// The approved call ran: the task is gone.
		a, err = w.lb.rest(w.token, "GET", "/tasks/"+id, "", true)
		if err != nil || a.status != http.StatusNotFound {
			w.rec.fail("task %s after its deletion was approved: %v %d %s", id, err, a.status, clip(a.body))
			continue
		}
		w.approved.Add(1)
	}
}

var formTokenRE = regexp.MustCompile(`name="form" value="([^"]+)"`)

// approve opens link with a fresh cookie jar, follows the sign-in through
// the issuer (which approves at once) back to the page, and continues.
func (w *workload) approve(link, lbURL string) error {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	c := &http.Client{Jar: jar, Timeout: attemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// GET /approve/{id} → the issuer → /approve/callback → /approve/{id}.
	next := link
	var page string
	for i := 0; ; i++ {
		if i == 10 {
			return fmt.Errorf("more than 10 redirects, last to %s", next)
		}
		status, loc, body, err := w.browse(c, http.MethodGet, next, nil, lbURL)
		if err != nil {
			return err
		}
		if status >= 300 && status < 400 && loc != "" {
			next = loc
			continue
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET %s: %d %s", next, status, clip([]byte(body)))
		}
		page = body
		break
	}
	m := formTokenRE.FindStringSubmatch(page)
	if m == nil {
		return fmt.Errorf("no decision form on the page: %s", clip([]byte(page)))
	}
	status, _, body, err := w.browse(c, http.MethodPost, link, url.Values{"form": {m[1]}, "decision": {"continue"}}, lbURL)
	if err != nil {
		return err
	}
	// 409: a retry after a 502 (browse) found the approval decided by the
	// attempt lost with the killed replica; the page shows that outcome.
	if status != http.StatusOK && status != http.StatusSeeOther && status != http.StatusConflict {
		return fmt.Errorf("continue: %d %s", status, clip([]byte(body)))
	}
	return nil
}

// browse sends one browser request, recorded like every other request,
// and retries a 503 with Retry-After (a draining replica did nothing) and
// a 502 (the replica died with it in flight): a GET changes nothing, and
// the decision POST is a compare-and-set on the approval (a replayed form
// gets 409 with the outcome), as a person pressing the button again would.
func (w *workload) browse(c *http.Client, method, target string, form url.Values, lbURL string) (int, string, string, error) {
	for range maxAttempts {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, target, body)
		if err != nil {
			return 0, "", "", err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", lbURL)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		began := time.Now()
		res, err := c.Do(req)
		if err != nil {
			return 0, "", "", fmt.Errorf("%s %s: %w", method, target, err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		took := time.Since(began)
		loc := ""
		if l, err := res.Location(); err == nil {
			loc = l.String()
		}
		retry := res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" ||
			res.StatusCode == http.StatusBadGateway
		if strings.HasPrefix(target, lbURL) {
			outcome := outcomeOK
			if retry {
				outcome = map[bool]string{true: outcomeDrain, false: outcomeLost}[res.StatusCode == http.StatusServiceUnavailable]
			}
			w.rec.add(attempt{at: began, took: took, outcome: outcome})
		}
		if !retry {
			return res.StatusCode, loc, string(raw), nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return 0, "", "", fmt.Errorf("%s %s: gave up after %d attempts", method, target, maxAttempts)
}
