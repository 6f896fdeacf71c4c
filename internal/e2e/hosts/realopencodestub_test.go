package hosts

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// promptStub stands in for the Messages API (streamed) for a host whose
// prompts name the tool call to make: a prompt "CALL TOOL {ARGS}" is
// answered with that call, when the host offers TOOL; a tool result that
// names a job ("job_id": "job_...") with a call of mcpx_job on it; any
// other turn with text. It keeps the tool results it was sent.
type promptStub struct {
	n       atomic.Int64
	mu      sync.Mutex
	results []string
}

var (
	promptCall = regexp.MustCompile(`^CALL (\S+) (\{.*\})$`)
	jobNamed   = regexp.MustCompile(`"job_id": "(job_[A-Za-z0-9_-]+)"`)
)

func (s *promptStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := readMessages(w, r)
	if body == nil {
		return
	}
	offered := map[string]bool{}
	for _, t := range body.Tools {
		offered[t.Name] = true
	}
	tool, args := "", ""
	if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "user" {
		text, results := promptBlocks(body.Messages[n-1].Content)
		s.mu.Lock()
		s.results = append(s.results, results...)
		s.mu.Unlock()
		if m := promptCall.FindStringSubmatch(strings.TrimSpace(text)); m != nil && len(results) == 0 {
			tool, args = m[1], m[2]
		}
		for _, res := range results {
			if m := jobNamed.FindStringSubmatch(res); m != nil {
				tool, args = "mcpx_job", fmt.Sprintf(`{"job_id":%q,"wait_seconds":60}`, m[1])
			}
		}
	}
	if tool != "" && offered[tool] {
		streamTurn(w, body.Model, tool, fmt.Sprintf("toolu_%d", s.n.Add(1)), args)
		return
	}
	streamTurn(w, body.Model, "", "", "")
}

// promptBlocks returns a message's text and its tool results.
func promptBlocks(content json.RawMessage) (text string, results []string) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(content, &blocks)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text += b.Text
		case "tool_result":
			results = append(results, blockText(b.Content))
		}
	}
	return text, results
}

// blockText is a tool result's content as text: a string, or its text
// blocks joined.
func blockText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

func (s *promptStub) toolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}

// toolUpdate is one message.part.updated event of a tool part, as
// opencode's server published it, and when it arrived.
type toolUpdate struct {
	at      time.Time
	session string
	tool    string
	callID  string
	status  string
	title   string
	output  string
	mcpx    map[string]any // the state's metadata.mcpx
}

// opencodeEvents reads opencode's event stream (GET /event) until ctx
// ends, keeping its tool parts' updates.
type opencodeEvents struct {
	mu      sync.Mutex
	updates []toolUpdate
	wake    chan struct{}
	done    chan struct{}
}

func watchOpencode(t *testing.T, ctx context.Context, base string) *opencodeEvents {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/event", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /event: %v", err)
	}
	ev := &opencodeEvents{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(ev.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			at := time.Now()
			var e struct {
				Type       string `json:"type"`
				Properties struct {
					SessionID string `json:"sessionID"`
					Part      struct {
						Type   string `json:"type"`
						Tool   string `json:"tool"`
						CallID string `json:"callID"`
						State  struct {
							Status   string `json:"status"`
							Title    string `json:"title"`
							Output   string `json:"output"`
							Metadata struct {
								Mcpx map[string]any `json:"mcpx"`
							} `json:"metadata"`
						} `json:"state"`
					} `json:"part"`
				} `json:"properties"`
			}
			if json.Unmarshal([]byte(data), &e) != nil || e.Type != "message.part.updated" || e.Properties.Part.Type != "tool" {
				continue
			}
			p := e.Properties.Part
			ev.mu.Lock()
			ev.updates = append(ev.updates, toolUpdate{at: at, session: e.Properties.SessionID, tool: p.Tool, callID: p.CallID,
				status: p.State.Status, title: p.State.Title, output: p.State.Output, mcpx: p.State.Metadata.Mcpx})
			ev.mu.Unlock()
			select {
			case ev.wake <- struct{}{}:
			default:
			}
		}
	}()
	return ev
}

// wait returns the first update that match accepts, failing after d.
func (ev *opencodeEvents) wait(t *testing.T, d time.Duration, what string, match func(toolUpdate) bool) toolUpdate {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		ev.mu.Lock()
		for _, u := range ev.updates {
			if match(u) {
				ev.mu.Unlock()
				return u
			}
		}
		ev.mu.Unlock()
		select {
		case <-ev.wake:
		case <-ev.done:
			t.Fatalf("opencode's event stream ended before %s", what)
		case <-deadline.C:
			t.Fatalf("no %s in opencode's event stream within %s", what, d)
		}
	}
}

// of returns the updates of one session's tool call.
func (ev *opencodeEvents) of(session, callID string) []toolUpdate {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []toolUpdate
	for _, u := range ev.updates {
		if u.session == session && u.callID == callID {
			out = append(out, u)
		}
	}
	return out
}
