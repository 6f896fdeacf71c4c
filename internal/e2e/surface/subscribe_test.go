package surface

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// waitListen waits for mcpx's subscriptions/listen naming uri, and only
// it, in the wire log of upstream name, and returns the last such
// request's id.
func waitListen(t *testing.T, e *mcpxtest.Env, name, uri string) string {
	t.Helper()
	want := `"resourceSubscriptions":[` + harness.JsonText(uri) + `]`
	deadline := time.Now().Add(harness.TranscriptWait)
	for time.Now().Before(deadline) {
		id := ""
		for _, l := range e.WireLog(name) {
			if !strings.Contains(l, `"method":"subscriptions/listen"`) || !strings.Contains(l, want) {
				continue
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(l[strings.Index(l, "{"):]), &m); err != nil {
				t.Fatalf("wire log line %q: %v", l, err)
			}
			id = string(m.ID)
		}
		if id != "" {
			return id
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never got a subscriptions/listen with %s:\n%s", name, want, strings.Join(e.WireLog(name), "\n"))
	return ""
}

// TestSubscriptionKept: mcpx keeps a host's resource subscription across
// its upstream's restarts, and a subscribed server up. A legacy host
// subscribes to a resource of a (2026-07-28: a listen of mcpx's own) and
// of b (legacy: resources/subscribe); both have an idle stop of 1 s. Held
// well past it, neither is stopped. Each then crashes (its crash tool):
// mcpx starts it again on its own, subscribes again, and tells the host
// the resource was updated (an update may have gone unheard meanwhile); a
// touch on the new process reaches the host too. When a ends mcpx's
// listen itself (notifications/cancelled naming it, as a server shutting
// down does on stdio), mcpx listens again on the same session. Once the
// host unsubscribes, the idle stop applies again.
func TestSubscriptionKept(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		idle := map[string]any{"idleStop": "1s"}
		cfg := e.WriteConfig(nil,
			mcpxtest.Demo{Name: "a", Args: []string{"-surface", "-resource-host", "a"}, Fields: idle},
			mcpxtest.Demo{Name: "b", Args: []string{"-surface", "-resource-host", "b", "-era", "legacy"}, Fields: idle},
		)
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		servers := []string{"a", "b"}
		uri := func(s string) string { return "demo://" + s + "/readme" }
		updates := func(s string) int {
			n := 0
			for _, r := range h.Received() {
				if string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri(s)+`"}}` {
					n++
				}
			}
			return n
		}
		waitUpdates := func(s string, n int, why string) {
			t.Helper()
			h.WaitFor(harness.WaitLong, why, func(mcpxtest.Received) bool { return updates(s) >= n })
		}
		for _, s := range servers {
			h.Result(h.Request("resources/subscribe", map[string]any{"uri": uri(s)}), harness.WaitLong)
		}
		time.Sleep(2500 * time.Millisecond) // well past the idle stop
		starts := func(s string) int {      // a speaks 2026-07-28, b legacy
			n := 0
			for _, ev := range e.Records(s) {
				if ev.Event == demo.EventRequest && ev.Method == map[string]string{"a": "server/discover", "b": "initialize"}[s] {
					n++
				}
			}
			return n
		}
		for _, s := range servers {
			if n := harness.UpstreamProcs(t, e.RecordPath(s)); n == 0 || starts(s) != 1 {
				t.Fatalf("%s has %d processes and was started %d times 2.5 s into a subscription, want it still up: its idle stop must wait while it is subscribed", s, n, starts(s))
			}
			h.Response(h.Request("tools/call", map[string]any{"name": s + "__crash", "arguments": map[string]any{"after": 0}}), harness.WaitLong)
		}
		for _, s := range servers {
			waitUpdates(s, 1, "the update mcpx sends for "+uri(s)+" once it is subscribed again")
			if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": s + "__touch", "arguments": map[string]any{"uri": uri(s)}}), harness.WaitLong)); got != "updated "+uri(s) {
				t.Errorf("%s's new process says %q: mcpx did not subscribe again", s, got)
			}
			waitUpdates(s, 2, "the update from "+s+"'s new process")
		}
		for _, s := range servers {
			if n := starts(s); n != 2 {
				t.Errorf("%s started %d times, want 2", s, n)
			}
		}
		// a ends its listens, as a server shutting down would (on stdio:
		// notifications/cancelled naming each): mcpx listens again on the
		// same session, and tells the host the resource was updated.
		if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "a__touch", "arguments": map[string]any{"endListens": true}}), harness.WaitLong)); !strings.HasPrefix(got, "ended ") || got == "ended 0 listens" {
			t.Errorf("a's touch says %q, want its listens ended", got)
		}
		waitUpdates("a", 3, "the update mcpx sends once it listens again")
		if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "a__touch", "arguments": map[string]any{"uri": uri("a")}}), harness.WaitLong)); got != "updated "+uri("a") {
			t.Errorf("a says %q after mcpx listened again", got)
		}
		waitUpdates("a", 4, "the update on mcpx's new listen")
		if n := starts("a"); n != 2 {
			t.Errorf("a started %d times after it ended its listens, want still 2", n)
		}
		for _, s := range servers {
			h.Result(h.Request("resources/unsubscribe", map[string]any{"uri": uri(s)}), harness.WaitLong)
		}
		for _, s := range servers {
			took := harness.WaitProcs(t, e.RecordPath(s), 0, harness.WaitLong)
			t.Logf("%s: %s stopped %s after the host unsubscribed (idle stop 1 s)", mode, s, took.Round(10*time.Millisecond))
		}
	})
}

// TestSubscribeHTTPUpstream: a 2026-07-28 Streamable HTTP upstream's
// resource, subscribed to by a legacy host (resources/subscribe) and a
// 2026-07-28 host (its own listen), through one listen of mcpx's (one
// per mcpx: in-process, each host has its own): each
// host hears the update under its own terms; when the upstream ends
// mcpx's listen (answering it), mcpx listens again and both hosts hear the
// resource may have changed; and when the last host
// leaves mcpx ends its listen by closing that request's stream, which the
// upstream sees as the listen cancelled.
func TestSubscribeHTTPUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		url, record, wire := harness.StartDemoHTTP(t, "-surface", "-resource-host", "h")
		e := mcpxtest.NewEnv(t)
		for from, to := range map[string]string{record: e.RecordPath("h"), wire: e.WireLogPath("h")} {
			if err := os.Symlink(from, to); err != nil {
				t.Fatal(err)
			}
		}
		cfg := harness.WriteServersConfig(t, e, map[string]any{"h": map[string]any{"type": "http", "url": url}})
		old := e.StartHost(mode, cfg)
		old.Initialize("2025-11-25")
		old.Result(old.Request("resources/subscribe", map[string]any{"uri": "demo://h/readme"}), harness.WaitLong)
		modern := e.StartHost(mode, cfg)
		meta := mcpxtest.ModernMeta(nil)
		listen := modern.Request("subscriptions/listen", map[string]any{"_meta": meta, "notifications": map[string]any{"resourceSubscriptions": []string{"demo://h/readme"}}})
		modern.WaitFor(harness.WaitLong, "the acknowledgement", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/subscriptions/acknowledged" && strings.Contains(string(r.Raw), `"resourceSubscriptions":["demo://h/readme"]`)
		})
		if got := harness.ResultText(t, old.Result(old.Request("tools/call", map[string]any{"name": "h__touch", "arguments": map[string]any{"uri": "demo://h/readme"}}), harness.WaitLong)); got != "updated demo://h/readme" {
			t.Fatalf("h's touch says %q", got)
		}
		old.WaitFor(harness.WaitLong, "the legacy host's update", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://h/readme"}}`
		})
		modern.WaitFor(harness.WaitLong, "the 2026 host's update", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://h/readme","_meta":{"io.modelcontextprotocol/subscriptionId":`+listen.String()+`}}}`
		})
		// h ends its listens (over HTTP: it answers them, which ends
		// their streams): mcpx listens again, and both hosts hear that
		// the resource may have changed.
		if got := harness.ResultText(t, old.Result(old.Request("tools/call", map[string]any{"name": "h__touch", "arguments": map[string]any{"endListens": true}}), harness.WaitLong)); got == "ended 0 listens" {
			t.Fatalf("h's touch says %q", got)
		}
		count := func(h *mcpxtest.Host, line string) int {
			n := 0
			for _, r := range h.Received() {
				if string(r.Raw) == line {
					n++
				}
			}
			return n
		}
		oldLine := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://h/readme"}}`
		modernLine := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://h/readme","_meta":{"io.modelcontextprotocol/subscriptionId":` + listen.String() + `}}}`
		old.WaitFor(harness.WaitLong, "a second update for the legacy host", func(mcpxtest.Received) bool { return count(old, oldLine) >= 2 })
		modern.WaitFor(harness.WaitLong, "a second update for the 2026 host", func(mcpxtest.Received) bool { return count(modern, modernLine) >= 2 })
		listenID := waitListen(t, e, "h", "demo://h/readme")
		listens := 0
		for _, l := range e.WireLog("h") {
			if strings.Contains(l, `"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["demo://h/readme"]}`) {
				listens++
			}
		}
		want := 2 // the daemon's one for both hosts, and the one after h ended it
		if mode == mcpxtest.InProcess {
			want = 4 // each host has an mcpx of its own
		}
		if listens != want {
			t.Errorf("h got %d listens for demo://h/readme, want %d", listens, want)
		}
		old.Close()
		modern.Notify("notifications/cancelled", map[string]any{"requestId": listen.Raw()})
		deadline := time.Now().Add(harness.WaitLong)
		for {
			var ended *demo.Event
			for _, ev := range e.Records("h") {
				if ev.Event == demo.EventFinished && ev.Method == "subscriptions/listen" && string(ev.ID) == listenID {
					ended = &ev
				}
			}
			if ended != nil {
				if ended.Outcome != demo.OutcomeCancelled {
					t.Errorf("mcpx's listen ended %q upstream, want cancelled", ended.Outcome)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mcpx's listen %s never ended upstream", listenID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestHTTPSessionEndUnsubscribes: a legacy HTTP session's resource
// subscriptions end with it. The host subscribes and ends its session
// (DELETE): mcpx unsubscribes upstream, and the server, no longer kept
// up by the subscription, is stopped by its idle stop.
func TestHTTPSessionEndUnsubscribes(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "b", Args: []string{"-surface", "-resource-host", "b", "-era", "legacy"}, Fields: map[string]any{"idleStop": "1s"}})
		m := harness.StartHTTP(t, e, mode, cfg, false)
		h := harness.NewRawHost(t, m)
		h.Initialize("2025-11-25")
		if r := h.Do(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"demo://b/readme"}}`, nil); r.Status != http.StatusOK || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
		h.EndSession()
		waitWire(t, e, "b", `"method":"resources/unsubscribe","params":{"uri":"demo://b/readme"}`)
		harness.WaitProcs(t, e.RecordPath("b"), 0, harness.WaitLong)
	})
}
