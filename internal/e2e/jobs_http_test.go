package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store"
)

// TestJobHTTPHostLeft: a legacy HTTP host that leaves mid-call without a
// cancel (as some hosts do on their own timeout) leaves a job; its retry
// of the same call attaches to that job and gets the result, and the
// upstream ran the tool once.
func TestJobHTTPHostLeft(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		m := startHTTP(t, e, mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}), false)
		h := newRawHost(t, m)
		h.initialize("2025-11-25")
		body := callBody(1, "demo__sleep_then", map[string]any{"seconds": 2, "text": "kept for you"}, nil)

		ctx, leave := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+m.Token)
		req.Header.Set("Mcp-Session-Id", h.sid)
		sent := make(chan error, 1)
		go func() {
			resp, err := h.hc.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			sent <- err
		}()
		e.WaitRecord("demo", waitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "sleep_then" })
		leave()
		<-sent
		m.waitLog(t, waitLong, "the host left mid-call: the call goes on as a job")

		r := h.do(callBody(2, "demo__sleep_then", map[string]any{"text": "kept for you", "seconds": 2}, nil), nil)
		if len(r.Msgs) != 1 || r.Msgs[0].Error != nil || firstText(t, r.Msgs[0].Result) != "kept for you" {
			t.Fatalf("the retry: %s", r.Body)
		}
		if n := executions(e, "demo", "sleep_then"); n != 1 {
			t.Fatalf("the upstream ran the tool %d times, want 1", n)
		}
	})
}

// keptJob reads the job a log line names (job=ID) from the job store of
// mcpx serving HTTP in mode, once it has ended.
func keptJob(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, line string) *store.Job {
	t.Helper()
	_, rest, ok := strings.Cut(line, "job=")
	if !ok {
		t.Fatalf("no job in %q", line)
	}
	id, _, _ := strings.Cut(rest, " ")
	id = strings.Trim(strings.TrimSpace(id), `"`)
	path := mcpxtest.InProcessFiles(e).Jobs
	if mode == mcpxtest.Daemon {
		path = filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", store.FileName)
	}
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(waitLong); ; time.Sleep(20 * time.Millisecond) {
		j, err := st.Get(context.Background(), "", id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if j.Status != store.Running || time.Now().After(deadline) {
			return j
		}
	}
}
