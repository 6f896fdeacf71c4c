package relay

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// withMember returns raw with key set to value, every other byte kept.
func withRawMember(t *testing.T, raw json.RawMessage, key, value string) string {
	t.Helper()
	obj, err := jsonrpc.ParseObject(raw)
	if err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	obj.Set(key, json.RawMessage(value))
	return string(obj.Bytes())
}

// TestGarbageFromUpstream: the demo's garbage tool writes a line that is not
// JSON before its result. mcpx skips the line, relays the result, and the
// upstream stays usable.
func TestGarbageFromUpstream(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")
		res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__garbage", "arguments": map[string]any{}}), harness.RelayWait)
		if got := harness.FirstText(t, res); !strings.Contains(got, "not JSON") {
			t.Errorf("garbage result text %q", got)
		}
		if !slices.Contains(e.WireLog("demo"), "> this is not json") {
			t.Fatalf("the demo did not write its garbage line; wire log:\n%s", strings.Join(e.WireLog("demo"), "\n"))
		}
		res = h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"next": true}}), harness.RelayWait)
		if string(harness.RawMember(t, res, "structuredContent")) != `{"next":true}` {
			t.Errorf("echo after garbage: %s", res)
		}
	})
}

// TestUpstreamCrashMidCall: the demo's crash tool sends one progress and
// exits with status 3. The host gets a prompt error naming the upstream and
// the exit status, and the next call works on a restarted upstream. The
// time from the exit to the host's error is logged.
func TestUpstreamCrashMidCall(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")
		for round := 1; round <= 3; round++ {
			id := h.Request("tools/call", map[string]any{
				"name":      "demo__crash",
				"arguments": map[string]any{"code": 3, "after": 0.1},
				"_meta":     map[string]any{"progressToken": fmt.Sprintf("crash-%d", round)},
			})
			resp := h.WaitFor(harness.RelayWait, "the crashed call's answer", func(r mcpxtest.Received) bool {
				return r.Msg.IsResponse() && r.Msg.ID == id
			})
			rpcErr := harness.WantError(t, "crashed call", resp.Msg, -31000, id.String(), `"demo"`, "exit status 3")
			var data struct {
				Mcpx struct {
					Kind   string `json:"kind"`
					Server string `json:"server"`
					Status string `json:"status"`
				} `json:"mcpx"`
			}
			if err := json.Unmarshal(rpcErr.Data, &data); err != nil || data.Mcpx.Kind != "upstream_exited" || data.Mcpx.Server != "demo" || data.Mcpx.Status != "exit status 3" {
				t.Errorf("crash error data %s, want kind upstream_exited, server demo, status exit status 3", rpcErr.Data)
			}
			exit := nthExit(t, e, round)
			exitAt, err := time.Parse(time.RFC3339Nano, exit.At)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("round %d: upstream exit to host error: %v", round, resp.At.Sub(exitAt).Round(time.Microsecond))
			var sawProgress bool
			for _, r := range h.Received() {
				if r.Msg.Method == "notifications/progress" && strings.Contains(string(r.Msg.Params), fmt.Sprintf(`"crash-%d"`, round)) {
					sawProgress = true
				}
			}
			if !sawProgress {
				t.Errorf("round %d: the crash tool's progress did not reach the host", round)
			}

			// At once, the next call: the pool starts a new upstream.
			res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"round": round}}), harness.RelayWait)
			if want := fmt.Sprintf(`{"round":%d}`, round); string(harness.RawMember(t, res, "structuredContent")) != want {
				t.Errorf("echo after crash %d: %s", round, res)
			}
		}
	})
}

// nthExit waits for the demo's n-th record of the crash tool exiting.
func nthExit(t *testing.T, e *mcpxtest.Env, n int) demo.Event {
	t.Helper()
	deadline := time.Now().Add(harness.RelayWait)
	for {
		var exits []demo.Event
		for _, ev := range e.Records("demo") {
			if ev.Event == demo.EventFinished && ev.Outcome == demo.OutcomeExit {
				exits = append(exits, ev)
			}
		}
		if len(exits) >= n {
			return exits[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo recorded %d exits within %s, want %d", len(exits), harness.RelayWait, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUpstreamCommandMissing: a server whose command does not exist fails
// its calls with an error naming it, and tools/list still shows the other
// servers' tools.
func TestUpstreamCommandMissing(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		missing := e.Path("no-such-command")
		h := e.StartHost(mode, e.WriteConfig(nil,
			mcpxtest.Demo{Name: "demo"},
			mcpxtest.Demo{Name: "broken", Fields: map[string]any{"command": missing}},
		))
		h.Initialize("2025-11-25")

		id := h.Request("tools/call", map[string]any{"name": "broken__echo", "arguments": map[string]any{}})
		rpcErr := harness.WantError(t, "call to the missing command", h.Response(id, harness.RelayWait), -31000, id.String(), `"broken"`, missing, "no such file")
		t.Logf("missing command: %d %s", rpcErr.Code, rpcErr.Message)

		names, _ := harness.ListToolDefs(t, h, map[string]any{})
		for _, tool := range harness.DemoToolNames {
			if !slices.Contains(names, "demo__"+tool) {
				t.Errorf("tools/list lacks demo__%s: %q", tool, names)
			}
		}
		for _, n := range names {
			if strings.HasPrefix(n, "broken") {
				t.Errorf("tools/list shows %q of the broken server", n)
			}
		}

		// mcpx_search says which server is missing from its answers.
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_search", "arguments": map[string]any{"query": "echo"}}), harness.RelayWait)
		if text := harness.FirstText(t, res); !strings.Contains(text, "broken") || !strings.Contains(text, "unavailable") {
			t.Errorf("mcpx_search does not name the unavailable server: %q", text)
		}

		// The working server still works.
		res = h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"ok": 1}}), harness.RelayWait)
		if string(harness.RawMember(t, res, "structuredContent")) != `{"ok":1}` {
			t.Errorf("echo: %s", res)
		}
	})
}

// TestFaithfulToolDefinition: the echo tool's definition, full of what a
// lossy relay breaks, reaches hosts of both eras byte for byte but for its
// exposed name.
func TestFaithfulToolDefinition(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}, mcpxtest.Demo{Name: "old", Args: []string{"-era", "legacy"}}))
		check := func(era string, defs map[string]json.RawMessage) {
			t.Helper()
			for _, server := range []string{"demo", "old"} {
				exposed := server + "__echo"
				raw, ok := defs[exposed]
				if !ok {
					t.Errorf("%s host: no %s", era, exposed)
					continue
				}
				if got := string(harness.RawMember(t, raw, "name")); got != `"`+exposed+`"` {
					t.Errorf("%s host: name %s, want %q", era, got, exposed)
				}
				want := demo.EchoToolJSON
				if era == "2025-11-25" {
					// mcpx adds this one member for a 2025-11-25 host: it can run
					// any tool as a task of its own (tasks.go).
					want = strings.TrimSuffix(want, "}") + `,"execution":{"taskSupport":"optional"}}`
				}
				if got := withRawMember(t, raw, "name", `"echo"`); got != want {
					t.Errorf("%s host: %s definition, its name put back, is not the upstream's byte for byte:\n got %s\nwant %s", era, exposed, got, want)
				}
				for _, verbatim := range []string{
					`"x-tool-ext":{"a":1}`, `"x-ann":"k"`, `"x-kw":[1,2]`,
					`"$schema":"https://json-schema.org/draft/2020-12/schema"`,
					`"maximum":12345678901234567890`,
				} {
					if !strings.Contains(string(raw), verbatim) {
						t.Errorf("%s host: %s lacks %s verbatim: %s", era, exposed, verbatim, raw)
					}
				}
			}
		}
		_, defs := harness.ListToolDefs(t, h, map[string]any{"_meta": mcpxtest.ModernMeta(nil)})
		check("2026-07-28", defs)
		h.Initialize("2025-11-25")
		_, defs = harness.ListToolDefs(t, h, map[string]any{})
		check("2025-11-25", defs)
	})
}

// TestFaithfulRawResult: the raw tool's result (an unknown content type, a
// 20-digit integer, 1.0e+2, an unknown member) reaches a legacy host byte
// for byte, from legacy and 2026-07-28 upstreams alike; a 2026-07-28 host
// gets the same bytes with "resultType":"complete" as the last member.
func TestFaithfulRawResult(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "old", Args: []string{"-era", "legacy"}}, mcpxtest.Demo{Name: "new"}))
		modern := strings.TrimSuffix(demo.RawResultJSON, "}") + `,"resultType":"complete"}`
		for _, server := range []string{"old", "new"} {
			res := h.Result(h.Request("tools/call", map[string]any{"name": server + "__raw", "_meta": mcpxtest.ModernMeta(nil)}), harness.RelayWait)
			if string(res) != modern {
				t.Errorf("2026-07-28 host, %s upstream: raw result\n got %s\nwant %s", server, res, modern)
			}
		}
		h.Initialize("2025-11-25")
		for _, server := range []string{"old", "new"} {
			res := h.Result(h.Request("tools/call", map[string]any{"name": server + "__raw"}), harness.RelayWait)
			if string(res) != demo.RawResultJSON {
				t.Errorf("legacy host, %s upstream: raw result\n got %s\nwant %s", server, res, demo.RawResultJSON)
			}
		}
		// The upstreams really were of the two eras.
		wire := strings.Join(e.WireLog("old"), "\n")
		if !strings.Contains(wire, `"method":"initialize"`) {
			t.Errorf("the legacy upstream was not initialized:\n%s", wire)
		}
		if wire := strings.Join(e.WireLog("new"), "\n"); !strings.Contains(wire, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) || strings.Contains(wire, `"method":"initialize"`) {
			t.Errorf("the other upstream did not speak 2026-07-28:\n%s", wire)
		}
	})
}

// TestFaithfulArguments: echo's arguments come back byte for byte in
// structuredContent, for hosts of both eras and upstreams of both eras.
func TestFaithfulArguments(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "old", Args: []string{"-era", "legacy"}}, mcpxtest.Demo{Name: "new"}))
		meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		id := 1000
		call := func(era, server, meta string) {
			t.Helper()
			id++
			h.SendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s__echo","arguments":%s%s}}`, id, server, harness.EchoArgs, meta))
			m := h.Response(jsonrpc.NewIntID(int64(id)), harness.RelayWait)
			if m.Error != nil {
				t.Fatalf("%s host, %s upstream: %s", era, server, m.Encode())
			}
			if got := string(harness.RawMember(t, m.Result, "structuredContent")); got != harness.EchoArgs {
				t.Errorf("%s host, %s upstream: structuredContent\n got %s\nwant %s", era, server, got, harness.EchoArgs)
			}
			if got := harness.FirstText(t, m.Result); got != harness.EchoArgs {
				t.Errorf("%s host, %s upstream: text\n got %s\nwant %s", era, server, got, harness.EchoArgs)
			}
		}
		for _, server := range []string{"old", "new"} {
			call("2026-07-28", server, meta)
		}
		h.Initialize("2025-11-25")
		for _, server := range []string{"old", "new"} {
			call("2025-11-25", server, "")
		}
		// What the upstreams read carried the arguments as the host wrote them.
		for _, server := range []string{"old", "new"} {
			n := 0
			for _, l := range e.WireLog(server) {
				if strings.HasPrefix(l, "< ") && strings.Contains(l, `"arguments":`+harness.EchoArgs) {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%s upstream read the arguments verbatim %d times, want 2", server, n)
			}
		}
	})
}

// TestToolsListPagination: a demo that pages its tools/list two tools at a
// time still shows all its tools through mcpx, as one that does not page.
func TestToolsListPagination(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "paged", Args: []string{"-page-size", "2"}}, mcpxtest.Demo{Name: "whole"}))
		h.Initialize("2025-11-25")
		names, defs := harness.ListToolDefs(t, h, map[string]any{})
		var paged, whole []string
		for _, n := range names {
			if s, ok := strings.CutPrefix(n, "paged__"); ok {
				paged = append(paged, s)
			}
			if s, ok := strings.CutPrefix(n, "whole__"); ok {
				whole = append(whole, s)
			}
		}
		want := slices.Clone(harness.DemoToolNames)
		sort.Strings(want)
		sort.Strings(paged)
		sort.Strings(whole)
		if !slices.Equal(paged, want) || !slices.Equal(whole, want) {
			t.Errorf("tools through mcpx:\npaged %q\nwhole %q\nwant  %q", paged, whole, want)
		}
		for _, tool := range harness.DemoToolNames {
			p, w := defs["paged__"+tool], defs["whole__"+tool]
			if withRawMember(t, p, "name", `"`+tool+`"`) != withRawMember(t, w, "name", `"`+tool+`"`) {
				t.Errorf("%s differs between the paged and the whole listing:\n%s\n%s", tool, p, w)
			}
		}
		if len(names) != len(harness.MetaToolNames)+2*len(harness.DemoToolNames) {
			t.Errorf("tools/list has %d tools, want %d: %q", len(names), len(harness.MetaToolNames)+2*len(harness.DemoToolNames), names)
		}
		lists := 0
		for _, l := range e.WireLog("paged") {
			if strings.HasPrefix(l, "< ") && strings.Contains(l, `"method":"tools/list"`) {
				lists++
			}
		}
		if want := (len(harness.DemoToolNames) + 1) / 2; lists != want {
			t.Errorf("mcpx asked the paged demo for %d pages, want %d", lists, want)
		}
	})
}

// TestToolNamesAuto: with toolNames prefix "auto", tools are exposed under
// their bare names unless two servers share a name; colliding names are
// prefixed with their server. Server b is the demo behind two sed filters
// that rename its echo tool to echo2 on the way out and back on the way in,
// so that echo and echo2 are unique and every other name collides.
func TestToolNamesAuto(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		script := fmt.Sprintf(`sed -u 's/"name":"echo2"/"name":"echo"/' | '%s' demo -record '%s' | sed -u 's/"name":"echo"/"name":"echo2"/'`,
			e.Bin, e.RecordPath("b"))
		h := e.StartHost(mode, e.WriteConfig(map[string]any{"toolNames": map[string]any{"prefix": "auto"}},
			mcpxtest.Demo{Name: "a"},
			mcpxtest.Demo{Name: "b", Fields: map[string]any{"command": "sh", "args": []string{"-c", script}}},
		))
		h.Initialize("2025-11-25")
		names, _ := harness.ListToolDefs(t, h, map[string]any{})
		want := append(slices.Clone(harness.MetaToolNames), "echo", "echo2")
		for _, tool := range harness.DemoToolNames {
			if tool != "echo" {
				want = append(want, "a__"+tool, "b__"+tool)
			}
		}
		sort.Strings(want)
		got := slices.Clone(names)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("exposed names\n got %q\nwant %q", got, want)
		}

		// Bare and prefixed names reach the right server's tool.
		for _, c := range []struct{ name, server, tool string }{{"echo", "a", "echo"}, {"echo2", "b", "echo"}, {"b__raw", "b", "raw"}, {"a__raw", "a", "raw"}} {
			before := countToolRequests(e, c.server, c.tool)
			res := h.Result(h.Request("tools/call", map[string]any{"name": c.name, "arguments": map[string]any{}}), harness.RelayWait)
			if res == nil {
				continue
			}
			if after := countToolRequests(e, c.server, c.tool); after != before+1 {
				t.Errorf("calling %q: server %s got %d calls of %s, want %d", c.name, c.server, after, c.tool, before+1)
			}
		}
	})
}
