package relay

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// perHostDemo is the legacy demo with a session per host.
var perHostDemo = mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}, Fields: map[string]any{"perHost": true}}

// askFormTo is an elicitation whose message names who is asked.
func askFormTo(who string) string {
	return strings.Replace(harness.AskForm, "Your name?", "Your name, "+who+"?", 1)
}

// TestAskPerHostTwoHosts: TestAskStdioTwoHosts's scenario with perHost.
// Two hosts of one daemon call demo__ask at once on a legacy stdio
// server; each host has a process of its own, so each is asked its own
// question (and only that), concurrently, and gets its own answer. The
// demo started three times: the shared session (listings) and one per
// host. A crash of one host's process leaves the other's alone (its
// next call starts a new one); a host that leaves stops its process.
func TestAskPerHostTwoHosts(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, perHostDemo)
	marker := e.RecordPath("demo")
	a, b := e.StartHost(mcpxtest.Daemon, cfg), e.StartHost(mcpxtest.Daemon, cfg)
	harness.AskHost(a, `{"elicitation":{}}`)
	harness.AskHost(b, `{"elicitation":{}}`)

	a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + askFormTo("a") + `]}}}`)
	b.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + askFormTo("b") + `]}}}`)
	// Both questions are out before either is answered: the calls are in
	// flight at once.
	qa, qb := harness.Question(a, "elicitation/create"), harness.Question(b, "elicitation/create")
	if !strings.Contains(string(qa.Params), "Your name, a?") || !strings.Contains(string(qb.Params), "Your name, b?") {
		t.Fatalf("a was asked %s, b was asked %s; want each its own question", qa.Params, qb.Params)
	}
	b.SendRaw(`{"jsonrpc":"2.0","id":` + qb.ID.String() + `,"result":{"action":"accept","content":{"name":"Bea"}}}`)
	a.SendRaw(`{"jsonrpc":"2.0","id":` + qa.ID.String() + `,"result":{"action":"accept","content":{"name":"Ann"}}}`)
	ra, rb := string(a.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)), string(b.Result(jsonrpc.NewIntID(2), harness.TranscriptWait))
	if !strings.Contains(ra, "Ann") || strings.Contains(ra, "Bea") || !strings.Contains(rb, "Bea") || strings.Contains(rb, "Ann") {
		t.Errorf("a's result %s, b's %s; want each its own answer", ra, rb)
	}
	for name, h := range map[string]*mcpxtest.Host{"a": a, "b": b} {
		n := 0
		for _, r := range h.Received() {
			if r.Msg.IsRequest() {
				n++
			}
		}
		if n != 1 {
			t.Errorf("host %s was asked %d questions, want its own one", name, n)
		}
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 3 {
		t.Errorf("the demo was initialized %d times, want 3 (shared, a's, b's)", n)
	}
	// Each session is one process, or two under the daemon's supervisor.
	procs := harness.UpstreamProcs(t, marker)
	if procs != 3 && procs != 6 {
		t.Fatalf("%d processes hold the demo's record path, want 3 sessions' (3, or 6 supervised)", procs)
	}
	per := procs / 3
	out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
	if !strings.Contains(out, "demo: 2 host session(s)") {
		t.Errorf("mcpx status does not count the host sessions:\n%s", out)
	}

	// a's process crashes: b's runs on, untouched.
	a.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__crash","arguments":{"code":5,"after":0.01}}}`)
	if m := a.Response(jsonrpc.NewIntID(3), harness.TranscriptWait); m.Error == nil && !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("a's crashing call = %s, want an error", m.Result)
	}
	harness.WaitProcs(t, marker, 2*per, harness.WaitLong)
	if res := echoAs(b, 4, `"b"`); !strings.Contains(res, `"x":"b"`) {
		t.Errorf("b's call after a's process crashed = %s", res)
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 3 {
		t.Errorf("the demo was initialized %d times after a's crash and b's call, want 3 (b's process untouched)", n)
	}
	if res := echoAs(a, 4, `"a"`); !strings.Contains(res, `"x":"a"`) {
		t.Errorf("a's call after its crash = %s", res)
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 4 {
		t.Errorf("the demo was initialized %d times, want 4 (a's next call starts its process again)", n)
	}
	harness.WaitProcs(t, marker, 3*per, harness.WaitLong)

	// a leaves: its process stops; b's and the shared one stay.
	a.Close()
	harness.WaitProcs(t, marker, 2*per, harness.WaitLong)
	if res := echoAs(b, 5, `2`); !strings.Contains(res, `"x":2`) {
		t.Errorf("b's call after a left = %s", res)
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 4 {
		t.Errorf("the demo was initialized %d times after a left, want 4 (b's process untouched)", n)
	}
	b.Close()
	harness.WaitProcs(t, marker, per, harness.WaitLong) // the shared session, for listings
}

// echoAs calls demo__echo with x as request id and returns the result.
func echoAs(h *mcpxtest.Host, id int64, x string) string {
	h.SendRaw(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"demo__echo","arguments":{"x":` + x + `}}}`)
	return string(h.Result(jsonrpc.NewIntID(id), harness.TranscriptWait))
}

// TestPerHostHTTPHosts: over HTTP, each legacy session of a perHost
// server's hosts has a process of its own, and DELETE (the session's end)
// stops it; stateless 2026-07-28 requests of one principal share one, so
// that two of them do not start two.
func TestPerHostHTTPHosts(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, perHostDemo)
		marker := e.RecordPath("demo")
		m := harness.StartHTTP(t, e, mode, cfg, false)
		echo := func(h *harness.RawHost, id int, hdr map[string]string, meta map[string]any) {
			t.Helper()
			r := h.Do(harness.CallBody(id, "demo__echo", map[string]any{"x": id}, meta), hdr)
			if r.Status != http.StatusOK || len(r.Msgs) == 0 || !strings.Contains(string(r.Msgs[len(r.Msgs)-1].Result), fmt.Sprintf(`"x":%d`, id)) {
				t.Fatalf("call %d: %d %s", id, r.Status, r.Body)
			}
		}
		l1, l2 := harness.NewRawHost(t, m), harness.NewRawHost(t, m)
		l1.Initialize("2025-11-25")
		l2.Initialize("2025-11-25")
		echo(l1, 1, nil, nil)
		echo(l2, 2, nil, nil)
		echo(l1, 3, nil, nil)
		if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 3 {
			t.Errorf("the demo was initialized %d times, want 3 (shared, and one per legacy session)", n)
		}
		procs := harness.UpstreamProcs(t, marker)
		if procs != 3 && procs != 6 {
			t.Fatalf("%d processes hold the demo's record path, want 3 sessions' (3, or 6 supervised)", procs)
		}
		per := procs / 3

		modern := harness.NewRawHost(t, m)
		echo(modern, 4, harness.ModernHeaders("tools/call", "demo__echo"), harness.ModernMeta(nil))
		echo(modern, 5, harness.ModernHeaders("tools/call", "demo__echo"), harness.ModernMeta(nil))
		if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 4 {
			t.Errorf("the demo was initialized %d times, want 4 (one more for the stateless principal's requests)", n)
		}
		harness.WaitProcs(t, marker, 4*per, harness.WaitLong)

		l1.EndSession()
		harness.WaitProcs(t, marker, 3*per, harness.WaitLong)
		echo(l2, 6, nil, nil)
		echo(modern, 7, harness.ModernHeaders("tools/call", "demo__echo"), harness.ModernMeta(nil))
		if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize); n != 4 {
			t.Errorf("the demo was initialized %d times after one session ended, want 4 (the others untouched)", n)
		}
	})
}

// TestPerHostLogs: what a host's own session of a perHost server logs
// outside any request stream (stdio) reaches that host alone, not every
// host as a shared session's messages do.
func TestPerHostLogs(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy", "-surface"}, Fields: map[string]any{"perHost": true}})
	a, b := e.StartHost(mcpxtest.Daemon, cfg), e.StartHost(mcpxtest.Daemon, cfg)
	a.Initialize("2025-11-25")
	b.Initialize("2025-11-25")
	logAs := func(h *mcpxtest.Host, msg string) {
		t.Helper()
		res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__log", "arguments": map[string]any{"levels": []string{"error"}, "message": msg}}), harness.WaitLong)
		if !strings.Contains(string(res), "sent: error") {
			t.Fatalf("demo__log = %s", res)
		}
	}
	logAs(a, "from-a")
	logAs(b, "from-b")
	for name, h := range map[string]*mcpxtest.Host{"a": a, "b": b} {
		h.WaitFor(harness.WaitLong, name+"'s own log message", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/message" && strings.Contains(string(r.Raw), "from-"+name)
		})
	}
	time.Sleep(200 * time.Millisecond) // for a message that should not come
	for name, h := range map[string]*mcpxtest.Host{"a": a, "b": b} {
		for _, r := range h.Received() {
			if r.Msg.Method == "notifications/message" && !strings.Contains(string(r.Raw), "from-"+name) {
				t.Errorf("host %s got another host's log message %s", name, r.Raw)
			}
		}
	}
}

// TestPerHostReload: a reload that turns perHost off is a changed server:
// the hosts' own processes stop (a call in flight on one ends saying the
// server changed) and the next calls share one process.
func TestPerHostReload(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, perHostDemo)
	marker := e.RecordPath("demo")
	a, b := e.StartHost(mcpxtest.Daemon, cfg), e.StartHost(mcpxtest.Daemon, cfg)
	a.Initialize("2025-11-25")
	b.Initialize("2025-11-25")
	doomed := a.Request("tools/call", map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 30}})
	b.Result(b.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 1}}), harness.WaitLong)
	e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })
	procs := harness.UpstreamProcs(t, marker)
	if procs != 3 && procs != 6 {
		t.Fatalf("%d processes hold the demo's record path, want 3 sessions' (3, or 6 supervised)", procs)
	}
	per := procs / 3

	e.WriteConfig(nil, harness.LegacyDemo)
	if out, stderr, code := e.Run(harness.WaitLong, "reload", "--config", cfg); code != 0 || !strings.Contains(out, "changed   demo") {
		t.Fatalf("reload: exit %d: %s %s", code, out, stderr)
	}
	if m := a.Response(doomed, harness.WaitLong); m.Error == nil || !strings.Contains(m.Error.Message, `"demo" was changed in the config`) {
		t.Errorf("a's call in flight on its own process: got %s, want an error saying the server changed", m.Encode())
	}
	harness.WaitProcs(t, marker, 0, harness.WaitLong)
	before := harness.CountEvents(e.Records("demo"), demo.EventInitialize)
	for _, h := range []*mcpxtest.Host{a, b} {
		h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 2}}), harness.WaitLong)
	}
	if n := harness.CountEvents(e.Records("demo"), demo.EventInitialize) - before; n != 1 {
		t.Errorf("the demo started %d times for two hosts' calls after perHost was turned off, want 1", n)
	}
	harness.WaitProcs(t, marker, per, harness.WaitLong)
}
