package team

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// liveView opens cfg's daemon's live view as a browser does (a one-time
// link traded for a session) and returns its actions: POST path from
// the view's own page, answering the status.
func liveView(t *testing.T, e *mcpxtest.Env, cfg string) func(path string) int {
	t.Helper()
	u, err := url.Parse(harness.UiLink(t, e, cfg))
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + u.Host
	c := &http.Client{Timeout: harness.WaitLong}
	post := func(path, key, value string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, origin+path, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set(key, value)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, body
	}
	code, body := post("/ui/session", "Mcpx-Ui-Link", strings.TrimPrefix(u.Fragment, "t="))
	var got struct{ Session string }
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || got.Session == "" {
		t.Fatalf("trading the live view's link: %d %s", code, body)
	}
	return func(path string) int {
		t.Helper()
		code, body := post(path, "Mcpx-Ui-Session", got.Session)
		if code != http.StatusNoContent {
			t.Logf("live view POST %s: %d %s", path, code, body)
		}
		return code
	}
}
