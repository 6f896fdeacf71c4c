package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sse"
)

// TestJobAskPlainJSONHost: a legacy HTTP host whose POSTs take only JSON
// (mcpx cannot put requests on their responses) but that keeps its
// session's GET stream open, with a hard timer (2 s, its profile), gets a
// job for a call whose upstream asks only after that. The question
// reaches the host on its GET stream, its answer (POSTed) reaches the
// upstream, and mcpx_job returns the tool's result with that answer in
// it. The upstream ran the tool once.
func TestJobAskPlainJSONHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{"jsonhost": map[string]any{"timeout": "2s", "resetOnProgress": false}}},
			mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		h := harness.NewRawHost(t, m)
		init := h.Do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"jsonhost","version":"1"}}}`, nil)
		h.Sid = init.Header.Get("Mcp-Session-Id")
		if init.Status != http.StatusOK || h.Sid == "" {
			t.Fatalf("initialize: %d %s", init.Status, init.Body)
		}
		version := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		h.Do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, version)

		// The session's GET stream: what mcpx sends outside requests.
		ctx, cancel := context.WithTimeout(context.Background(), 2*harness.WaitLong)
		defer cancel()
		get, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Authorization", "Bearer "+m.Token)
		get.Header.Set("Mcp-Session-Id", h.Sid)
		get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		stream, err := h.Hc.Do(get)
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", stream, err)
		}
		defer stream.Body.Close()
		pushed := make(chan *jsonrpc.Message, 16)
		go func() {
			defer close(pushed)
			rd := sse.NewReader(stream.Body, 1<<20)
			for {
				ev, err := rd.Next()
				if err != nil {
					return
				}
				if msg, err := jsonrpc.Decode(ev.Data); err == nil {
					pushed <- msg
				}
			}
		}()

		jsonOnly := map[string]string{"Accept": "application/json", "Mcp-Protocol-Version": "2025-11-25"}
		// The upstream asks 5 s in, well after the call becomes a job
		// (about 1.7 s in): a question before that moment is refused by
		// design, and a loaded machine can fire the timer late.
		r := h.Do(harness.CallBody(1, "demo__ask_later", map[string]any{"seconds": 5, "message": "Which colour?"}, nil), jsonOnly)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
			t.Fatalf("the call: %d %s", r.Status, r.Body)
		}
		job := harness.JobOf(t, r.Msgs[0].Result)
		if job.Status != "running" {
			t.Fatalf("the call: %+v, want a running job", job)
		}
		var q *jsonrpc.Message
		for q == nil {
			select {
			case msg, ok := <-pushed:
				if !ok {
					t.Fatal("the GET stream ended before the job's question came")
				}
				if msg.Method == "elicitation/create" {
					q = msg
				}
			case <-time.After(harness.WaitLong):
				t.Fatalf("no question on the GET stream within %s", harness.WaitLong)
			}
		}
		if !strings.Contains(string(q.Params), "Which colour?") {
			t.Fatalf("the question: %s", q.Params)
		}
		ans := h.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"answer":"teal"}}}`, q.ID.Raw()), version)
		if ans.Status != http.StatusAccepted {
			t.Fatalf("the answer: %d %s", ans.Status, ans.Body)
		}
		var res json.RawMessage
		for deadline := time.Now().Add(harness.WaitLong); ; {
			r := h.Do(harness.CallBody(2, "mcpx_job", map[string]any{"job_id": job.JobID, "wait_seconds": 1}, nil), jsonOnly)
			if len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
				t.Fatalf("mcpx_job: %s", r.Body)
			}
			res = r.Msgs[0].Result
			if !strings.Contains(string(res), `"status":"running"`) || time.Now().After(deadline) {
				break
			}
		}
		if !strings.Contains(string(res), `{\"result\":{\"action\":\"accept\",\"content\":{\"answer\":\"teal\"}}}`) {
			t.Fatalf("mcpx_job: %s, want the host's answer in the tool's result", res)
		}
		if n := harness.Executions(e, "demo", "ask_later"); n != 1 {
			t.Errorf("the upstream ran the tool %d times, want 1", n)
		}
	})
}
