package principals

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// policyItems returns the member of every item of a list result's field,
// failing the test on an error or a further page.
func policyItems(t *testing.T, f harness.PolicyFace, method, field, member string) []string {
	t.Helper()
	m := f.Call(t, method, nil)
	var raw map[string]json.RawMessage
	if m.Error != nil || json.Unmarshal(m.Result, &raw) != nil {
		t.Fatalf("%s: %s: %s", f.Name, method, m.Encode())
	}
	if _, more := raw["nextCursor"]; more {
		t.Errorf("%s: %s has a further page: %s", f.Name, method, m.Result)
	}
	var items []map[string]any
	if err := json.Unmarshal(raw[field], &items); err != nil {
		t.Fatalf("%s: %s has no %s: %s", f.Name, method, field, m.Result)
	}
	out := []string{}
	for _, it := range items {
		s, _ := it[member].(string)
		out = append(out, s)
	}
	return out
}

// wantNothingOfB checks that a request of the host gets nothing of
// server b's: b's resources, prompts and completions say "of b", "from
// b" or "bob". (The request may still be answered: with b hidden, a is
// the only server serving resources, and mcpx routes to it what no
// server lists, as for any host with one such server; the test checks
// at its end that b never saw any of these requests.)
func wantNothingOfB(t *testing.T, f harness.PolicyFace, method string, params map[string]any) {
	t.Helper()
	m := string(f.Call(t, method, params).Encode())
	for _, words := range []string{"of b", "from b", `"bob"`} {
		if strings.Contains(m, words) {
			t.Errorf("%s: %s %v: %s, want nothing of b's", f.Name, method, params, m)
		}
	}
}

// hiddenServer checks that face, a host filtered to a__*, sees nothing of
// server b: not its name in the instructions or mcpx_exec's description,
// nor its resources, templates or prompts; reading, completing or
// subscribing to them gets nothing of b's; and a's resource that b also serves is
// a's alone, under its own URI.
func hiddenServer(t *testing.T, f harness.PolicyFace, instructions string) {
	t.Helper()
	if !strings.Contains(instructions, "1 MCP server(s): a.") {
		t.Errorf("%s: instructions %q, want them to name a alone", f.Name, instructions)
	}
	m := f.Call(t, "tools/list", nil)
	exec := strings.Contains(string(m.Result), `"name":"mcpx_exec"`) // not on the in-process HTTP gateway of these tests
	if m.Error != nil || exec && !strings.Contains(string(m.Result), "Servers: tools.a.") || strings.Contains(string(m.Result), "tools.b") {
		t.Errorf("%s: mcpx_exec's description names another server than a: %s", f.Name, m.Encode())
	}
	if got := policyItems(t, f, "resources/list", "resources", "uri"); !slices.Equal(got, []string{"demo://a/readme", "demo://a/config.json", "demo://shared/motd"}) {
		t.Errorf("%s: resources %q, want a's alone, motd under its own URI", f.Name, got)
	}
	if got := policyItems(t, f, "resources/templates/list", "resourceTemplates", "uriTemplate"); !slices.Equal(got, []string{"demo://a/items/{id}"}) {
		t.Errorf("%s: templates %q, want a's alone", f.Name, got)
	}
	if got := policyItems(t, f, "prompts/list", "prompts", "name"); !slices.Equal(got, []string{"a__greet", "a__plain"}) {
		t.Errorf("%s: prompts %q, want a's alone", f.Name, got)
	}
	m = f.Call(t, "resources/read", map[string]any{"uri": "demo://shared/motd"})
	if m.Error != nil || !strings.Contains(string(m.Result), "Message of the day from a.") {
		t.Errorf("%s: read of the motd a and b serve: %s, want a's", f.Name, m.Encode())
	}
	for _, uri := range []string{"demo://b/readme", "mcpx://b/demo://shared/motd", "demo://b/items/7"} {
		wantNothingOfB(t, f, "resources/read", map[string]any{"uri": uri})
	}
	wantNothingOfB(t, f, "prompts/get", map[string]any{"name": "b__greet", "arguments": map[string]string{"name": "zed"}})
	wantNothingOfB(t, f, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "b__greet"}, "argument": map[string]any{"name": "name", "value": "b"}})
	wantNothingOfB(t, f, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "demo://b/items/{id}"}, "argument": map[string]any{"name": "id", "value": "4"}})
	if !f.Modern {
		wantNothingOfB(t, f, "resources/subscribe", map[string]any{"uri": "demo://b/readme"})
	}
}

// TestHostFilterSurface: a host filtered to the tools of one server (a)
// sees none of another's (b) resources, templates, prompts or name, and
// no read, get, completion or subscription of it reaches b, over stdio and HTTP,
// legacy and 2026-07-28; b's log messages do not reach it; a host
// without a filter still sees both.
func TestHostFilterSurface(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
			"mcpxtest": map[string]any{"tools": []string{"a__*"}},
			"raw":      map[string]any{"tools": []string{"a__*"}},
		}},
			mcpxtest.Demo{Name: "a", Args: []string{"-surface", "-resource-host", "a"}},
			mcpxtest.Demo{Name: "b", Args: []string{"-surface", "-resource-host", "b", "-era", "legacy"}},
		)
		legacy := e.StartHost(mode, cfg)
		var init struct{ Instructions string }
		if err := json.Unmarshal(legacy.Initialize("2025-11-25"), &init); err != nil {
			t.Fatal(err)
		}
		hiddenServer(t, stdioFace(legacy, "stdio legacy", false, ""), init.Instructions)

		h := e.StartHost(mode, cfg)
		modern := stdioFace(h, "stdio 2026-07-28", true, "mcpxtest")
		hiddenServer(t, modern, discoverInstructions(t, modern))
		if got := harness.ListAll(t, h, "prompts/list", "prompts", "name", harness.PolicyMeta("boss")); !slices.Equal(got, []string{"a__greet", "a__plain", "b__greet", "b__plain"}) {
			t.Errorf("a host without a filter: prompts %q, want a's and b's", got)
		}
		hiddenListen(t, h)
		if mode == mcpxtest.Daemon {
			// Each in-process host has upstreams of its own: only through
			// the daemon do two hosts hear the same upstream's messages.
			hiddenLogs(t, e, mode, cfg, legacy)
		}

		m := harness.StartHTTP(t, e, mode, cfg, false)
		session := harness.NewRawHost(t, m)
		r := session.Do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		if len(r.Msgs) != 1 || json.Unmarshal(r.Msgs[0].Result, &init) != nil {
			t.Fatalf("initialize over HTTP: %d %s", r.Status, r.Body)
		}
		session.Initialize("2025-11-25")
		hiddenServer(t, harness.HttpFace(t, session, "http legacy", false, ""), init.Instructions)
		modernHTTP := harness.HttpFace(t, harness.NewRawHost(t, m), "http 2026-07-28", true, "raw")
		hiddenServer(t, modernHTTP, discoverInstructions(t, modernHTTP))

		wire := strings.Join(e.WireLog("b"), "\n")
		for _, method := range []string{"resources/read", "resources/subscribe", "prompts/get", "completion/complete"} {
			if strings.Contains(wire, `"method":"`+method+`"`) {
				t.Errorf("b was sent a %s of a host that may not use it", method)
			}
		}
	})
}

func discoverInstructions(t *testing.T, f harness.PolicyFace) string {
	t.Helper()
	var d struct{ Instructions string }
	if m := f.Call(t, "server/discover", nil); m.Error != nil || json.Unmarshal(m.Result, &d) != nil {
		t.Fatalf("%s: server/discover: %s", f.Name, m.Encode())
	}
	return d.Instructions
}

// hiddenListen: a filtered 2026-07-28 host's subscriptions/listen is
// acknowledged for a's resource alone, not b's.
func hiddenListen(t *testing.T, h *mcpxtest.Host) {
	t.Helper()
	sub := h.Request("subscriptions/listen", map[string]any{"_meta": harness.PolicyMeta("mcpxtest"), "notifications": map[string]any{
		"resourceSubscriptions": []string{"mcpx://b/demo://b/readme", "demo://a/readme"}}})
	ack := h.WaitFor(harness.WaitLong, "the listen's acknowledgement", func(r mcpxtest.Received) bool {
		return r.Msg.Method == "notifications/subscriptions/acknowledged" && strings.Contains(string(r.Raw), `subscriptionId":`+sub.String()+`}`)
	})
	if !strings.Contains(string(ack.Raw), `"resourceSubscriptions":["demo://a/readme"]`) {
		t.Errorf("a filtered host's listen: ack %s, want a's resource alone", ack.Raw)
	}
	h.Notify("notifications/cancelled", map[string]any{"requestId": sub.Raw()})
}

// hiddenLogs: b's log messages reach a host without a filter, not the
// filtered one, which gets a's.
func hiddenLogs(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, cfg string, filtered *mcpxtest.Host) {
	t.Helper()
	boss := e.StartHost(mode, cfg)
	boss.Result(boss.Request("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "boss", "version": "1"}}), harness.WaitLong)
	boss.Notify("notifications/initialized", nil)
	logged := func(server string) func(mcpxtest.Received) bool {
		return func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/message" && strings.Contains(string(r.Raw), "error: from "+server)
		}
	}
	for _, server := range []string{"b", "a"} {
		boss.Result(boss.Request("tools/call", map[string]any{"name": server + "__log", "arguments": map[string]any{"levels": []string{"error"}, "message": "from " + server}}), harness.WaitLong)
		boss.WaitFor(harness.WaitLong, server+"'s log message at the host without a filter", logged(server))
	}
	// a's message came after b's: had b's been sent to the filtered host,
	// it would be there by now.
	filtered.WaitFor(harness.WaitLong, "a's log message at the filtered host", logged("a"))
	if slices.ContainsFunc(filtered.Received(), logged("b")) {
		t.Error("b's log message reached the host filtered to a's tools")
	}
}
