package http

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHTTPUpstreamEverything: server-everything over Streamable HTTP as a
// legacy upstream, behind a recording proxy: tools/list, a long operation
// whose progress reaches the host before its result, and a host cancel
// that reaches the server as a notifications/cancelled POST (answered 202)
// carrying mcpx's id and the host's reason.
func TestHTTPUpstreamEverything(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		tap := harness.StartWireTap(t, harness.StartEverythingHTTP(t))
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServersConfig(t, e, map[string]any{"everything": map[string]any{"type": "http", "url": tap.Url}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
		for _, want := range []string{"everything__echo", "everything__trigger-long-running-operation"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}

		id := harness.SendCall(h, "101", "everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 5},
			map[string]any{"progressToken": "ev-1"})
		h.Result(id, harness.WaitLong)
		seen := progressBefore(t, h, id, `"ev-1"`)
		if len(seen) != 5 || !slices.IsSorted(seen) {
			t.Errorf("progress at the host: %v, want 5 increasing", seen)
		}

		cid := harness.SendCall(h, "102", "everything__trigger-long-running-operation", map[string]any{"duration": 20, "steps": 40},
			map[string]any{"progressToken": "ev-2"})
		h.WaitFor(harness.WaitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
			p, ok := harness.AsProgress(t, r)
			return ok && string(p.Token) == `"ev-2"`
		})
		harness.Cancel(h, "102", "the host is done")
		c := tap.WaitExchange(t, "answered notifications/cancelled", "notifications/cancelled", func(x harness.TappedExchange) bool { return x.Status != 0 })
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(c.Msg.Params, &p); err != nil {
			t.Fatal(err)
		}
		var upID string
		for _, x := range tap.Exchanges("tools/call") {
			if strings.Contains(string(x.Msg.Params), `"duration":20`) {
				upID = x.Msg.ID.String()
			}
		}
		if upID == "" || string(p.RequestID) != upID || p.Reason != "cancelled by the host: the host is done" {
			t.Errorf("cancellation %s; want requestId %s (mcpx's id of the call) and the host's reason", c.Msg.Params, upID)
		}
		if c.Status != http.StatusAccepted || c.Header.Get("Mcp-Session-Id") == "" {
			t.Errorf("server-everything answered the cancellation %d (session %q), want 202", c.Status, c.Header.Get("Mcp-Session-Id"))
		}
		h.NoResponse(cid, harness.Settle)
		t.Logf("%s: server-everything accepted notifications/cancelled %s", mode, c.Msg.Params)
	})
}

// v2Events reads what v2server.mjs reports.
type v2Events struct {
	mu     sync.Mutex
	events []v2Event
	wake   chan struct{}
}

type v2Event struct {
	Event         string            `json:"event"`
	URL           string            `json:"url"`
	Tool          string            `json:"tool"`
	Marker        string            `json:"marker"`
	ProgressToken json.RawMessage   `json:"progressToken"`
	Headers       map[string]string `json:"headers"`
	Reason        string            `json:"reason"`
	At            float64           `json:"at"` // ms since the epoch
}

func (ev v2Event) time() time.Time { return time.UnixMicro(int64(ev.At * 1000)) }

// startV2Server runs v2server.mjs and returns its reports and URL.
func startV2Server(t *testing.T) (*v2Events, string) {
	t.Helper()
	evs := &v2Events{wake: make(chan struct{}, 1)}
	_, interop := mcpxtest.Node(t)
	harness.StartNodeServer(t, nil, func(stream, text string) {
		var ev v2Event
		if stream != "stdout" || json.Unmarshal([]byte(text), &ev) != nil {
			t.Logf("v2server %s: %s", stream, text)
			return
		}
		evs.mu.Lock()
		evs.events = append(evs.events, ev)
		evs.mu.Unlock()
		select {
		case evs.wake <- struct{}{}:
		default:
		}
	}, filepath.Join(interop, "v2server.mjs"))
	return evs, evs.wait(t, "listening", func(ev v2Event) bool { return ev.Event == "listening" }).URL
}

func (evs *v2Events) find(match func(v2Event) bool) (v2Event, bool) {
	evs.mu.Lock()
	defer evs.mu.Unlock()
	for _, ev := range evs.events {
		if match(ev) {
			return ev, true
		}
	}
	return v2Event{}, false
}

func (evs *v2Events) wait(t *testing.T, what string, match func(v2Event) bool) v2Event {
	t.Helper()
	deadline := time.NewTimer(harness.WaitLong)
	defer deadline.Stop()
	for {
		if ev, ok := evs.find(match); ok {
			return ev
		}
		select {
		case <-evs.wake:
		case <-deadline.C:
			t.Fatalf("v2server reported no %s within %s", what, harness.WaitLong)
		}
	}
}

// TestHTTPUpstreamTSv2: a TypeScript SDK v2 server as a 2026-07-28
// upstream: tools/list without the tool whose x-mcp-header is invalid; a
// call whose progress reaches the host before its result; a call whose
// x-mcp-header parameter arrives as Mcp-Param-Region (the server checks
// it); and a host cancel that aborts the server's request (its abort
// signal fires) with no notifications/cancelled.
func TestHTTPUpstreamTSv2(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		evs, url := startV2Server(t)
		tap := harness.StartWireTap(t, url)
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServersConfig(t, e, map[string]any{"v2": map[string]any{"type": "http", "url": tap.Url}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
		for _, want := range []string{"v2__slow", "v2__region"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}
		if slices.Contains(names, "v2__bad_number") {
			t.Errorf("tools/list has v2__bad_number, whose x-mcp-header is invalid")
		}

		id := harness.SendCall(h, "101", "v2__slow", map[string]any{"steps": 5, "interval_ms": 10, "marker": "p1"},
			map[string]any{"progressToken": "v2-tok"})
		if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "done p1" {
			t.Errorf("result %q", got)
		}
		seen := progressBefore(t, h, id, `"v2-tok"`)
		if !slices.Equal(seen, []float64{1, 2, 3, 4, 5}) {
			t.Errorf("progress at the host: %v, want 1..5", seen)
		}
		call := evs.wait(t, "the call p1", func(ev v2Event) bool { return ev.Event == "call" && ev.Marker == "p1" })
		if call.Headers["mcp-protocol-version"] != "2026-07-28" || call.Headers["mcp-method"] != "tools/call" || call.Headers["mcp-name"] != "slow" {
			t.Errorf("the call's headers: %v", call.Headers)
		}

		rid := h.Request("tools/call", map[string]any{"name": "v2__region", "arguments": map[string]any{"region": "eu-west"}})
		if got := harness.ResultText(t, h.Result(rid, harness.WaitLong)); got != "region eu-west header eu-west" {
			t.Errorf("region: %q", got)
		}

		cid := harness.SendCall(h, "102", "v2__slow", map[string]any{"steps": 100000, "interval_ms": 20, "marker": "c1"},
			map[string]any{"progressToken": "v2-cancel"})
		h.WaitFor(harness.WaitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
			p, ok := harness.AsProgress(t, r)
			return ok && string(p.Token) == `"v2-cancel"`
		})
		sent := time.Now()
		harness.Cancel(h, "102", "stop")
		ab := evs.wait(t, "the abort of c1", func(ev v2Event) bool { return ev.Event == "aborted" && ev.Marker == "c1" })
		h.NoResponse(cid, harness.Settle)
		if _, ok := evs.find(func(ev v2Event) bool { return ev.Event == "finished" && ev.Marker == "c1" }); ok {
			t.Errorf("the cancelled call ran to its end")
		}
		if n := len(tap.Exchanges("notifications/cancelled")); n != 0 {
			t.Errorf("%d notifications/cancelled posted to a 2026-07-28 upstream", n)
		}
		for _, x := range append(tap.Exchanges("initialize"), tap.Exchanges("tools/call")...) {
			if x.Msg.Method == "initialize" || x.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a 2026-07-28 upstream got %s (session %q)", x.Msg.Method, x.Header.Get("Mcp-Session-Id"))
			}
		}
		t.Logf("%s: host cancel -> v2 server's abort signal in %v (reason %q)", mode, ab.time().Sub(sent), ab.Reason)

		// The upstream is still usable.
		if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "v2__slow",
			"arguments": map[string]any{"steps": 1, "marker": "after"}}), harness.WaitLong)); got != "done after" {
			t.Errorf("after the cancel: %q", got)
		}
	})
}

// TestHTTPUpstreamDemo: the repo's own fixture over HTTP in each era, as
// mcpx's upstream. Legacy: the fixture closes every request's stream after
// two events and pings mcpx before each call, so a call only completes if
// mcpx answers the ping and resumes the stream with GET and Last-Event-ID;
// a host cancel arrives as notifications/cancelled with mcpx's id and the
// host's reason. Modern: the fixture sees the request metadata headers,
// and a host cancel as the end of the call's stream, with no
// notifications/cancelled at all.
func TestHTTPUpstreamDemo(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				args := []string{"-era", era}
				if era == "legacy" {
					args = append(args, "-sse-close-after", "2", "-ping-client")
				}
				url, record, wire := harness.StartDemoHTTP(t, args...)
				e := mcpxtest.NewEnv(t)
				for from, to := range map[string]string{record: e.RecordPath("demo"), wire: e.WireLogPath("demo")} {
					if err := os.Symlink(from, to); err != nil {
						t.Fatal(err)
					}
				}
				cfg := harness.WriteServersConfig(t, e, map[string]any{"demo": map[string]any{"type": "http", "url": url}})
				h := e.StartHost(mode, cfg)
				h.Initialize("2025-11-25")

				names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
				if !slices.Contains(names, "demo__export") {
					t.Fatalf("tools/list lacks demo__export: %v", names)
				}

				id := harness.SendCall(h, "201", "demo__export", map[string]any{"seconds": 0.5, "steps": 5},
					map[string]any{"progressToken": "d-1", harness.MarkerKey: "export-1"})
				if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "exported 1000 records in 5 parts" {
					t.Errorf("export: %q", got)
				}
				seen := progressBefore(t, h, id, `"d-1"`)
				if len(seen) != 5 || !slices.IsSorted(seen) {
					t.Errorf("progress at the host: %v, want 5 increasing", seen)
				}
				up := harness.UpstreamRequest(e, "demo", "export-1")
				if era == "legacy" {
					resumed := 0
					for _, ev := range e.Records("demo") {
						switch ev.Event {
						case demo.EventResumed:
							resumed++
						case demo.EventPingAnswered:
							if ev.Outcome != demo.OutcomeResult {
								t.Errorf("mcpx answered the fixture's ping with %s", ev.Outcome)
							}
						}
					}
					if resumed == 0 {
						t.Errorf("the fixture recorded no resumption; records:\n%s", harness.Describe(e.Records("demo")))
					}
				} else {
					for k, want := range map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "export"} {
						if got := up.Headers[k]; got != want {
							t.Errorf("the fixture saw %s = %q, want %q (headers %v)", k, got, want, up.Headers)
						}
					}
				}

				cid := harness.SendCall(h, "202", "demo__export", map[string]any{"seconds": 30},
					map[string]any{"progressToken": "d-2", harness.MarkerKey: "cancel-1"})
				h.WaitFor(harness.WaitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
					p, ok := harness.AsProgress(t, r)
					return ok && string(p.Token) == `"d-2"`
				})
				harness.Cancel(h, "202", "enough")
				up = harness.UpstreamRequest(e, "demo", "cancel-1")
				ev := harness.UpstreamCancel(e, "demo", up.ID)
				if era == "legacy" {
					harness.CheckCancel(t, ev, "cancelled by the host: enough")
				} else {
					harness.CheckCancel(t, ev, demo.ReasonStreamClosed)
				}
				e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool {
					return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeCancelled
				})
				h.NoResponse(cid, harness.Settle)
				for _, ev := range e.Records("demo") {
					if ev.Event == demo.EventCancelledHTTP || (era == "modern" && ev.Event == demo.EventCancelled && ev.Reason != demo.ReasonStreamClosed) {
						t.Errorf("a 2026-07-28 upstream got a cancellation message: %+v", ev)
					}
				}
				t.Logf("%s %s: upstream cancellation %q", era, mode, ev.Reason)
			})
		})
	}
}
