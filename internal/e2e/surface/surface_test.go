package surface

import (
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// surfaceDemos are two demos serving the surface: "a" speaks 2026-07-28
// to mcpx (the era is probed), "b" only the legacy revisions and pages
// its lists two items at a time. Both serve demo://shared/motd.
func surfaceConfig(e *mcpxtest.Env) string {
	return e.WriteConfig(nil,
		mcpxtest.Demo{Name: "a", Args: []string{"-surface", "-resource-host", "a"}},
		mcpxtest.Demo{Name: "b", Args: []string{"-surface", "-resource-host", "b", "-era", "legacy", "-page-size", "2"}},
	)
}

// rpcError returns the error a request got; it fails the test on a result.
func rpcError(t *testing.T, h *mcpxtest.Host, id jsonrpc.ID) *jsonrpc.Error {
	t.Helper()
	m := h.Response(id, harness.WaitLong)
	if m.Error == nil {
		t.Fatalf("request %s succeeded, want an error: %s", id, m.Result)
	}
	return m.Error
}

func wantRPCError(t *testing.T, what string, e *jsonrpc.Error, code int64, words string) {
	t.Helper()
	if e.Code != code || !strings.Contains(e.Message, words) {
		t.Errorf("%s: error %d %q, want %d containing %q", what, e.Code, e.Message, code, words)
	}
}

// TestSurfaceLegacyHost: a legacy host lists, reads, gets, completes,
// subscribes and logs through mcpx, against a 2026-07-28 upstream (a) and a
// legacy one (b).
func TestSurfaceLegacyHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, surfaceConfig(e))
		init := string(h.Initialize("2025-11-25"))
		for _, c := range []string{`"resources":{"subscribe":true,"listChanged":true}`, `"prompts":{"listChanged":true}`, `"completions":{}`, `"logging":{}`} {
			if !strings.Contains(init, c) {
				t.Errorf("initialize result lacks %s: %s", c, init)
			}
		}

		// Resources: URIs unchanged, but the one both serve, in mcpx's
		// form; b's pages of two are mcpx's pages too.
		uris := harness.ListAll(t, h, "resources/list", "resources", "uri", nil)
		want := []string{"demo://a/readme", "demo://a/config.json", "mcpx://a/demo://shared/motd",
			"demo://b/readme", "demo://b/config.json", "mcpx://b/demo://shared/motd"}
		if !slices.Equal(uris, want) {
			t.Errorf("resources = %q, want %q", uris, want)
		}
		tmpls := harness.ListAll(t, h, "resources/templates/list", "resourceTemplates", "uriTemplate", nil)
		if !slices.Equal(tmpls, []string{"demo://a/items/{id}", "demo://b/items/{id}"}) {
			t.Errorf("templates = %q", tmpls)
		}
		wantRPCError(t, "bad cursor", rpcError(t, h, h.Request("resources/list", map[string]any{"cursor": "not-ours"})), -32602, "invalid cursor")

		// Reads: by URI, by template, in mcpx's form; and the errors.
		read := func(uri string) string {
			return string(h.Result(h.Request("resources/read", map[string]any{"uri": uri}), harness.WaitLong))
		}
		if got := read("demo://b/items/7"); got != `{"contents":[{"mimeType":"text/plain","text":"Item 7 of b.","uri":"demo://b/items/7"}]}` {
			t.Errorf("read by b's template = %s", got)
		}
		if got := read("demo://a/config.json"); !strings.Contains(got, `12345678901234567890`) || strings.Contains(got, "resultType") {
			t.Errorf("read of a's config (a speaks 2026-07-28) = %s", got)
		}
		if got := read("mcpx://a/demo://shared/motd"); got != `{"contents":[{"mimeType":"text/plain","text":"Message of the day from a.","uri":"mcpx://a/demo://shared/motd"}]}` {
			t.Errorf("read in mcpx's form = %s", got)
		}
		wantRPCError(t, "ambiguous", rpcError(t, h, h.Request("resources/read", map[string]any{"uri": "demo://shared/motd"})), -32602, "mcpx://a/demo://shared/motd or mcpx://b/demo://shared/motd")
		unknown := rpcError(t, h, h.Request("resources/read", map[string]any{"uri": "demo://nowhere/x"}))
		wantRPCError(t, "unknown uri", unknown, -32002, "demo://nowhere/x")
		if string(unknown.Data) != `{"uri":"demo://nowhere/x"}` {
			t.Errorf("unknown uri error data = %s", unknown.Data)
		}
		// b's own -32002 reaches a legacy host as it was.
		wantRPCError(t, "b's not found", rpcError(t, h, h.Request("resources/read", map[string]any{"uri": "mcpx://b/demo://b/none"})), -32002, "Resource not found")

		// Prompts, named like tools.
		names := harness.ListAll(t, h, "prompts/list", "prompts", "name", nil)
		if !slices.Equal(names, []string{"a__greet", "a__plain", "b__greet", "b__plain"}) {
			t.Errorf("prompts = %q", names)
		}
		got := string(h.Result(h.Request("prompts/get", map[string]any{"name": "b__greet", "arguments": map[string]string{"name": "zed"}}), harness.WaitLong))
		if got != `{"description":"from b","messages":[{"content":{"text":"Say hello to zed from b.","type":"text"},"role":"user"}]}` {
			t.Errorf("prompts/get b__greet = %s", got)
		}
		wantRPCError(t, "unknown prompt", rpcError(t, h, h.Request("prompts/get", map[string]any{"name": "a__nope"})), -32602, "Unknown prompt: a__nope")
		wantRPCError(t, "missing argument", rpcError(t, h, h.Request("prompts/get", map[string]any{"name": "a__greet"})), -32602, "needs the argument name")

		// Completion, by prompt and by template.
		if got := string(h.Result(h.Request("completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": "a__greet"}, "argument": map[string]any{"name": "name", "value": "al"}}), harness.WaitLong)); got != `{"completion":{"hasMore":false,"total":2,"values":["alice","albert"]}}` {
			t.Errorf("complete a__greet = %s", got)
		}
		if got := string(h.Result(h.Request("completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "demo://b/items/{id}"}, "argument": map[string]any{"name": "id", "value": "4"}}), harness.WaitLong)); got != `{"completion":{"hasMore":false,"total":1,"values":["42"]}}` {
			t.Errorf("complete b's template = %s", got)
		}

		// Subscriptions: updates under the URI the host used. a speaks
		// 2026-07-28, which has no resources/subscribe: mcpx subscribes
		// through a subscriptions/listen of its own naming the URI, and
		// cancels it when the host unsubscribes.
		h.Result(h.Request("resources/subscribe", map[string]any{"uri": "demo://a/readme"}), harness.WaitLong)
		if res := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "a__touch", "arguments": map[string]any{"uri": "demo://a/readme"}}), harness.WaitLong)); res != "updated demo://a/readme" {
			t.Errorf("a's touch says %q: a has no subscription", res)
		}
		h.WaitFor(harness.WaitLong, "resources/updated for demo://a/readme, without a's subscription id", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a/readme"}}`
		})
		h.Result(h.Request("resources/unsubscribe", map[string]any{"uri": "demo://a/readme"}), harness.WaitLong)
		listenID := waitListen(t, e, "a", "demo://a/readme")
		waitWire(t, e, "a", `"method":"notifications/cancelled","params":{"requestId":`+listenID+`,"reason":"mcpx: no host is subscribed to demo://a/readme any more"}`)
		h.Result(h.Request("resources/subscribe", map[string]any{"uri": "demo://b/readme"}), harness.WaitLong)
		h.Result(h.Request("resources/subscribe", map[string]any{"uri": "mcpx://b/demo://shared/motd"}), harness.WaitLong)
		h.Result(h.Request("tools/call", map[string]any{"name": "b__touch", "arguments": map[string]any{"uri": "demo://b/readme"}}), harness.WaitLong)
		h.WaitFor(harness.WaitLong, "resources/updated for demo://b/readme", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://b/readme"}}`
		})
		h.Result(h.Request("tools/call", map[string]any{"name": "b__touch", "arguments": map[string]any{"uri": "demo://shared/motd"}}), harness.WaitLong)
		h.WaitFor(harness.WaitLong, "resources/updated in mcpx's form", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"mcpx://b/demo://shared/motd"}}`
		})
		h.Result(h.Request("resources/unsubscribe", map[string]any{"uri": "demo://b/readme"}), harness.WaitLong)
		wantRPCError(t, "unsubscribe twice", rpcError(t, h, h.Request("resources/unsubscribe", map[string]any{"uri": "demo://b/readme"})), -32602, "not subscribed")
		wire := strings.Join(e.WireLog("b"), "\n")
		if n := strings.Count(wire, `"method":"resources/subscribe","params":{"uri":"demo://b/readme"}`); n != 1 {
			t.Errorf("b saw %d subscribes of demo://b/readme, want 1", n)
		}
		if n := strings.Count(wire, `"method":"resources/unsubscribe","params":{"uri":"demo://b/readme"}`); n != 1 {
			t.Errorf("b saw %d unsubscribes of demo://b/readme, want 1", n)
		}

		// Logging: b (legacy) is set to the host's level; the host gets
		// what its level admits.
		h.Result(h.Request("logging/setLevel", map[string]any{"level": "warning"}), harness.WaitLong)
		wantRPCError(t, "bad level", rpcError(t, h, h.Request("logging/setLevel", map[string]any{"level": "loud"})), -32602, "unknown log level")
		if res := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "b__log", "arguments": map[string]any{
			"levels": []string{"debug", "info", "warning", "error"}, "message": "m"}}), harness.WaitLong)); res != "sent: warning,error" {
			t.Errorf("b's log tool says %q, want it set to warning", res)
		}
		h.WaitFor(harness.WaitLong, "the error log message", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"error: m","level":"error","logger":"demo"}}`
		})

		// List changes reach the host, and the lists show them.
		h.Result(h.Request("tools/call", map[string]any{"name": "a__touch", "arguments": map[string]any{"grow": true}}), harness.WaitLong)
		for _, m := range []string{"notifications/resources/list_changed", "notifications/prompts/list_changed"} {
			h.WaitFor(harness.WaitLong, m, func(r mcpxtest.Received) bool { return r.Msg.Method == m })
		}
		if names := harness.ListAll(t, h, "prompts/list", "prompts", "name", nil); !slices.Contains(names, "a__extra") {
			t.Errorf("prompts after the change = %q, want a__extra among them", names)
		}

		// A host that leaves is unsubscribed upstream.
		h.Close()
		waitWire(t, e, "b", `"method":"resources/unsubscribe","params":{"uri":"demo://shared/motd"}`)
	})
}

// TestSurfaceModernHost: a 2026-07-28 host, without initialize, on the
// same two upstreams: resultType on every result, -32602 for what it
// cannot find (b's legacy -32002 mapped), the legacy-only methods refused,
// and list changes on its listen.
func TestSurfaceModernHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, surfaceConfig(e))
		meta := mcpxtest.ModernMeta(nil)
		with := func(p map[string]any) map[string]any { p["_meta"] = meta; return p }

		disc := string(h.Result(h.Request("server/discover", with(map[string]any{})), harness.WaitLong))
		for _, c := range []string{`"resources":{"subscribe":true,"listChanged":true}`, `"prompts":{"listChanged":true}`, `"completions":{}`, `"logging":{}`} {
			if !strings.Contains(disc, c) {
				t.Errorf("server/discover lacks %s: %s", c, disc)
			}
		}

		uris := harness.ListAll(t, h, "resources/list", "resources", "uri", meta)
		if len(uris) != 6 || !slices.Contains(uris, "mcpx://b/demo://shared/motd") || !slices.Contains(uris, "demo://a/readme") {
			t.Errorf("resources = %q", uris)
		}
		list := string(h.Result(h.Request("resources/list", with(map[string]any{})), harness.WaitLong))
		if !strings.Contains(list, `"resultType":"complete"`) || !strings.Contains(list, `"cacheScope":"private"`) {
			t.Errorf("a 2026 list result lacks resultType or cache hints: %s", list)
		}
		wantRPCError(t, "bad cursor", rpcError(t, h, h.Request("prompts/list", with(map[string]any{"cursor": "eyJzIjoibm9uZSJ9"}))), -32602, "invalid cursor")

		// b speaks legacy: its result gains resultType, nothing else.
		if got := string(h.Result(h.Request("resources/read", with(map[string]any{"uri": "demo://b/items/9"})), harness.WaitLong)); got != `{"contents":[{"mimeType":"text/plain","text":"Item 9 of b.","uri":"demo://b/items/9"}],"ttlMs":0,"cacheScope":"private","resultType":"complete"}` {
			t.Errorf("read from a legacy upstream = %s", got)
		}
		// a speaks 2026-07-28: its result as it was.
		if got := string(h.Result(h.Request("resources/read", with(map[string]any{"uri": "demo://a/readme"})), harness.WaitLong)); got != `{"contents":[{"mimeType":"text/plain","text":"The demo's read-me, served by a.","uri":"demo://a/readme"}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}` {
			t.Errorf("read from a 2026 upstream = %s", got)
		}
		mapped := rpcError(t, h, h.Request("resources/read", with(map[string]any{"uri": "mcpx://b/demo://b/none"})))
		wantRPCError(t, "b's -32002, mapped", mapped, -32602, "Resource not found")
		if string(mapped.Data) != `{"uri":"demo://b/none"}` {
			t.Errorf("mapped error data = %s", mapped.Data)
		}
		wantRPCError(t, "unknown uri", rpcError(t, h, h.Request("resources/read", with(map[string]any{"uri": "demo://nowhere/x"}))), -32602, "demo://nowhere/x")

		got := string(h.Result(h.Request("prompts/get", with(map[string]any{"name": "a__greet", "arguments": map[string]string{"name": "ann"}})), harness.WaitLong))
		if !strings.Contains(got, `Say hello to ann from a.`) || !strings.HasSuffix(got, `"resultType":"complete"}`) {
			t.Errorf("prompts/get a__greet = %s", got)
		}
		wantRPCError(t, "unknown prompt", rpcError(t, h, h.Request("prompts/get", with(map[string]any{"name": "nope"}))), -32602, "Unknown prompt: nope")
		if got := string(h.Result(h.Request("completion/complete", with(map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": "b__greet"}, "argument": map[string]any{"name": "name", "value": "b"}})), harness.WaitLong)); got != `{"completion":{"hasMore":false,"total":1,"values":["bob"]},"resultType":"complete"}` {
			t.Errorf("complete b__greet = %s", got)
		}
		for _, m := range []string{"resources/subscribe", "resources/unsubscribe", "logging/setLevel"} {
			wantRPCError(t, m, rpcError(t, h, h.Request(m, with(map[string]any{"uri": "demo://a/readme", "level": "info"}))), -32601, "method not found")
		}

		listen := h.Request("subscriptions/listen", with(map[string]any{"notifications": map[string]any{"resourcesListChanged": true, "promptsListChanged": true}}))
		ack := h.WaitFor(harness.WaitLong, "the acknowledgement", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/subscriptions/acknowledged"
		})
		if !strings.Contains(string(ack.Raw), `"notifications":{"promptsListChanged":true,"resourcesListChanged":true}`) {
			t.Errorf("ack = %s", ack.Raw)
		}
		h.Result(h.Request("tools/call", with(map[string]any{"name": "b__touch", "arguments": map[string]any{"grow": true}})), harness.WaitLong)
		for _, m := range []string{"notifications/resources/list_changed", "notifications/prompts/list_changed"} {
			r := h.WaitFor(harness.WaitLong, m+" on the listen", func(r mcpxtest.Received) bool { return r.Msg.Method == m })
			if !strings.Contains(string(r.Raw), `"io.modelcontextprotocol/subscriptionId":`+listen.String()) {
				t.Errorf("%s not tagged with the listen's id: %s", m, r.Raw)
			}
		}
		if uris := harness.ListAll(t, h, "resources/list", "resources", "uri", meta); !slices.Contains(uris, "demo://b/extra") {
			t.Errorf("resources after the change = %q, want demo://b/extra", uris)
		}

		// Resource subscriptions on a listen: b's (legacy) by
		// resources/subscribe, a's (2026-07-28) by a listen of mcpx's own;
		// an unknown URI routes nowhere, so the ack leaves it out.
		sub := h.Request("subscriptions/listen", with(map[string]any{"notifications": map[string]any{
			"resourceSubscriptions": []string{"mcpx://b/demo://shared/motd", "demo://a/readme", "demo://nowhere/x"}}}))
		subAck := h.WaitFor(harness.WaitLong, "the second acknowledgement", func(r mcpxtest.Received) bool {
			return r.Msg.Method == "notifications/subscriptions/acknowledged" && strings.Contains(string(r.Raw), `subscriptionId":`+sub.String()+`}`)
		})
		if !strings.Contains(string(subAck.Raw), `"notifications":{"resourceSubscriptions":["mcpx://b/demo://shared/motd","demo://a/readme"]}`) {
			t.Errorf("ack = %s", subAck.Raw)
		}
		h.Result(h.Request("tools/call", with(map[string]any{"name": "a__touch", "arguments": map[string]any{"uri": "demo://a/readme"}})), harness.WaitLong)
		h.WaitFor(harness.WaitLong, "a's update, tagged with the host's listen id", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a/readme","_meta":{"io.modelcontextprotocol/subscriptionId":`+sub.String()+`}}}`
		})
		h.Result(h.Request("tools/call", with(map[string]any{"name": "b__touch", "arguments": map[string]any{"uri": "demo://shared/motd"}})), harness.WaitLong)
		h.WaitFor(harness.WaitLong, "the tagged update", func(r mcpxtest.Received) bool {
			return string(r.Raw) == `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"mcpx://b/demo://shared/motd","_meta":{"io.modelcontextprotocol/subscriptionId":`+sub.String()+`}}}`
		})
		h.Notify("notifications/cancelled", map[string]any{"requestId": sub.Raw()})
		waitWire(t, e, "b", `"method":"resources/unsubscribe","params":{"uri":"demo://shared/motd"}`)
		listenID := waitListen(t, e, "a", "demo://a/readme")
		waitWire(t, e, "a", `"method":"notifications/cancelled","params":{"requestId":`+listenID+`,"reason":"mcpx: no host is subscribed to demo://a/readme any more"}`)
	})
}
