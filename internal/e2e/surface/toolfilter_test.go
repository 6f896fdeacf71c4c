package surface

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestHostToolFilter: a host's tools list in mcpx.hosts (found by the
// clientInfo.name it sends, of both eras) limits what it sees in
// tools/list and mcpx_search and what it may call, directly or through
// mcpx_call; a refused call names the rule that refused it.
func TestHostToolFilter(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		settings := map[string]any{"hosts": map[string]any{
			"mcpxtest": map[string]any{"tools": []string{"demo__*", "!demo__ex*", "!demo__s*"}},
		}}
		h := e.StartHost(mode, e.WriteConfig(settings, mcpxtest.Demo{Name: "demo"}))
		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			var meta map[string]any
			if era == "2026-07-28" {
				meta = mcpxtest.ModernMeta(nil)
			} else {
				h.Initialize(era)
			}
			params := func(p map[string]any) map[string]any {
				if meta != nil {
					p["_meta"] = meta
				}
				return p
			}
			names, _ := harness.ListToolDefs(t, h, params(map[string]any{}))
			for _, name := range []string{"mcpx_search", "mcpx_call", "demo__echo", "demo__wait"} {
				if !slices.Contains(names, name) {
					t.Errorf("%s: tools/list lacks %s: %v", era, name, names)
				}
			}
			for _, name := range names {
				if strings.HasPrefix(name, "demo__ex") || strings.HasPrefix(name, "demo__s") {
					t.Errorf("%s: tools/list shows %s, which the filter refuses", era, name)
				}
			}
			want := 0
			for _, n := range names {
				if strings.HasPrefix(n, "mcpx_") {
					want++ // mcpx's own tools
				}
			}
			for _, n := range harness.DemoToolNames {
				if !strings.HasPrefix(n, "ex") && !strings.HasPrefix(n, "s") {
					want++
				}
			}
			if len(names) != want {
				t.Errorf("%s: tools/list has %d tools, want %d: %v", era, len(names), want, names)
			}

			res := h.Result(h.Request("tools/call", params(map[string]any{"name": "mcpx_search", "arguments": map[string]any{"query": "export progress", "limit": 200}})), harness.RelayWait)
			var sr searchResult
			if err := json.Unmarshal(harness.RawMember(t, res, "structuredContent"), &sr); err != nil {
				t.Fatal(err)
			}
			for _, hit := range sr.Tools {
				if strings.HasPrefix(hit.Name, "demo__ex") || strings.HasPrefix(hit.Name, "demo__s") {
					t.Errorf("%s: mcpx_search found %s, which the filter refuses", era, hit.Name)
				}
			}

			m := h.Response(h.Request("tools/call", params(map[string]any{"name": "demo__export", "arguments": map[string]any{"seconds": 0.1, "steps": 1}})), harness.RelayWait)
			wantMsg := `tool "demo__export" is not allowed for this host: rule "!demo__ex*" (mcpx.hosts.mcpxtest.tools[1]) refuses it`
			if m.Error == nil || m.Error.Code != -32602 || m.Error.Message != wantMsg {
				t.Errorf("%s: direct call of a refused tool: %s, want -32602 %q", era, m.Encode(), wantMsg)
			}
			res = h.Result(h.Request("tools/call", params(map[string]any{"name": "mcpx_call", "arguments": map[string]any{"name": "demo__scan", "arguments": map[string]any{}}})), harness.RelayWait)
			if text := harness.FirstText(t, res); string(harness.RawMember(t, res, "isError")) != "true" || !strings.Contains(text, `rule "!demo__s*" (mcpx.hosts.mcpxtest.tools[2]) refuses it`) {
				t.Errorf("%s: mcpx_call of a refused tool: %s", era, res)
			}
			res = h.Result(h.Request("tools/call", params(map[string]any{"name": "demo__echo", "arguments": map[string]any{"text": "hi"}})), harness.RelayWait)
			if strings.Contains(string(res), `"isError":true`) {
				t.Errorf("%s: an allowed tool failed: %s", era, res)
			}
		}
	})
}

// TestHostToolFilterByToken: over HTTP, the name of the host's named
// token finds its filter before its clientInfo.name does.
func TestHostToolFilterByToken(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
			"alice": map[string]any{"tools": []string{"!demo__echo"}},
			"raw":   map[string]any{"tools": []string{"!*"}}, // newRawHost's clientInfo.name
		}}, mcpxtest.Demo{Name: "demo"})
		out, stderr, code := e.Run(30*time.Second, "token", "--name", "alice")
		if code != 0 {
			t.Fatalf("mcpx token --name alice: %d %s", code, stderr)
		}
		m := harness.StartHTTP(t, e, mode, cfg, false)
		alice := harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: strings.TrimSpace(out), LogBuf: m.LogBuf})
		alice.Initialize("2025-11-25")
		call := func(h *harness.RawHost) string {
			r := h.Do(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"hi"}}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			if r.Status != http.StatusOK || len(r.Msgs) == 0 {
				t.Fatalf("tools/call: %d %s", r.Status, r.Body)
			}
			return string(r.Msgs[len(r.Msgs)-1].Encode())
		}
		if got := call(alice); !strings.Contains(got, `rule \"!demo__echo\" (mcpx.hosts.alice.tools[0]) refuses it`) {
			t.Errorf("alice's echo: %s, want her token's rule to refuse it", got)
		}
		shared := harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: m.Token, LogBuf: m.LogBuf})
		shared.Initialize("2025-11-25")
		if got := call(shared); !strings.Contains(got, `rule \"!*\" (mcpx.hosts.raw.tools[0]) refuses it`) {
			t.Errorf("the default token's host: %s, want its clientInfo.name's rule to refuse it", got)
		}
	})
}

// TestHostToolFilterReload: an edit of the host's filter in the config
// applies from the next request on, without reconnecting.
func TestHostToolFilterReload(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		filter := func(patterns ...string) map[string]any {
			return map[string]any{"hosts": map[string]any{"mcpxtest": map[string]any{"tools": patterns}}}
		}
		cfg := e.WriteConfig(filter("!demo__echo"), mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		if names, _ := harness.ListToolDefs(t, h, map[string]any{}); slices.Contains(names, "demo__echo") {
			t.Fatalf("tools/list shows demo__echo, which the filter refuses: %v", names)
		}
		e.WriteConfig(filter("demo__echo"), mcpxtest.Demo{Name: "demo"})
		deadline := time.Now().Add(20 * time.Second)
		for {
			names, _ := harness.ListToolDefs(t, h, map[string]any{})
			names = slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcpx_") })
			if slices.Equal(names, []string{"demo__echo"}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("20s after the config changed, tools/list still shows %v, want only demo__echo and the meta-tools", names)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// TestHostToolFilterCodeMode: a script a host runs through mcpx_exec may
// call and find only the tools the host's filter allows, and
// mcpx_describe describes only those.
func TestHostToolFilterCodeMode(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
			"mcpx-e2e-gosdk": map[string]any{"tools": []string{"!demo__echo"}},
		}}, mcpxtest.Demo{Name: "demo"})
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", harness.NewProgressLog())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		res := harness.ExecScript(t, ctx, cs, `return await tools.demo.echo({text: "x"})`, nil)
		if text := harness.ScriptText(res); !res.IsError || !strings.Contains(text, `tool "demo__echo" is not allowed for this host: rule "!demo__echo" (mcpx.hosts.mcpx-e2e-gosdk.tools[0]) refuses it`) {
			t.Errorf("a script's call of a refused tool: isError %v %q", res.IsError, text)
		}
		res = harness.ExecScript(t, ctx, cs, `return (await mcpx.search("echo returns its arguments", 50)).map(h => h.name)`, nil)
		if text := harness.ScriptText(res); res.IsError || strings.Contains(text, "demo__echo") || !strings.Contains(text, "demo__") {
			t.Errorf("a script's mcpx.search: isError %v %q, want hits without demo__echo", res.IsError, text)
		}
		res = harness.ExecScript(t, ctx, cs, `return (await tools.demo.raw({})) !== undefined`, nil)
		if res.IsError {
			t.Errorf("a script's call of an allowed tool failed: %q", harness.ScriptText(res))
		}
		d, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "mcpx_describe", Arguments: map[string]any{"tools": []string{"demo__echo", "demo"}}})
		if err != nil {
			t.Fatal(err)
		}
		text := harness.ScriptText(d)
		if !strings.Contains(text, `tool "demo__echo" is not allowed for this host`) || strings.Contains(text, "  echo(") || !strings.Contains(text, "raw(") {
			t.Errorf("mcpx_describe of a refused tool and its server:\n%s", text)
		}
	})
}
