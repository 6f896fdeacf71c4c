package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// The sign-in's redirect is taken only from the browser that opened its
// start: another local user who sends the listener a code of their own
// with the right state (as if they had read the authorization URL) is
// refused, before the start and after it, and the sign-in goes on with
// the browser's code; a second redirect from the browser is refused too.
func TestCallbackBoundToBrowser(t *testing.T) {
	ts := newTestServer(t)
	type answer struct {
		status int
		body   string
	}
	var steps []string
	// The browser's requests are its own: they outlive the sign-in's
	// context, which ends as soon as the sign-in is done.
	ctx := testCtx(t)
	browser := func(_ context.Context, start string) error {
		su, err := url.Parse(start)
		if err != nil {
			return err
		}
		get := func(c *http.Client, u string) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			return c.Do(req)
		}
		noFollow := func(c *http.Client) *http.Client {
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			return c
		}
		attacker := noFollow(&http.Client{})
		forge := func(cb *url.URL, state string) (answer, error) {
			u := *cb
			u.RawQuery = url.Values{"code": {"ATTACKER-CODE"}, "state": {state}, "iss": {ts.URL}}.Encode()
			resp, err := get(attacker, u.String())
			if err != nil {
				return answer{}, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return answer{resp.StatusCode, string(b)}, nil
		}
		cbURL := &url.URL{Scheme: "http", Host: su.Host, Path: "/callback"}
		if a, err := forge(cbURL, "guessed"); err != nil || a.status != http.StatusForbidden {
			return fmt.Errorf("a redirect before the start: %+v %v, want 403", a, err)
		}
		steps = append(steps, "refused before the start")

		jar, _ := cookiejar.New(nil)
		victim := noFollow(&http.Client{Jar: jar})
		resp, err := get(victim, start)
		if err != nil {
			return err
		}
		resp.Body.Close()
		authURL, err := resp.Location()
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			return fmt.Errorf("the start: %d %v", resp.StatusCode, err)
		}
		if resp, err := get(attacker, start); err != nil || resp.StatusCode != http.StatusGone {
			return fmt.Errorf("the start opened a second time: %v %v, want 410", resp, err)
		}
		state := authURL.Query().Get("state")
		if a, err := forge(cbURL, state); err != nil || a.status != http.StatusForbidden {
			return fmt.Errorf("a forged redirect with the state: %+v %v, want 403", a, err)
		}
		steps = append(steps, "refused with the state")

		// The user approves: the authorization server redirects back.
		resp, err = get(victim, authURL.String())
		if err != nil {
			return err
		}
		resp.Body.Close()
		back, err := resp.Location()
		if err != nil {
			return err
		}
		// The browser's redirect, twice at once: one is taken, the
		// other refused.
		answers := make(chan answer, 2)
		for range 2 {
			go func() {
				resp, err := get(victim, back.String())
				if err != nil {
					answers <- answer{body: err.Error()}
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				answers <- answer{resp.StatusCode, string(b)}
			}()
		}
		a, b := <-answers, <-answers
		if a.status > b.status {
			a, b = b, a
		}
		if a.status != http.StatusOK || !strings.Contains(a.body, "signed in") || b.status != http.StatusConflict {
			return fmt.Errorf("the browser's redirect twice: %+v and %+v, want one taken and one 409", a, b)
		}
		steps = append(steps, "second refused")
		return nil
	}
	rec, err := (&Client{}).Login(testCtx(t), LoginRequest{Server: "s", URL: ts.URL + "/mcp", Browser: browser})
	if err != nil {
		t.Fatalf("login: %v (steps %v)", err, steps)
	}
	if code := ts.code.Load(); code == nil || *code == "ATTACKER-CODE" || !strings.HasPrefix(*code, "code-") {
		t.Fatalf("the code exchanged: %v", code)
	}
	if rec.Token.AccessToken != "at-authorization_code" || len(steps) != 3 {
		t.Fatalf("record %+v, steps %v", rec, steps)
	}
}
