package surface

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// searchResult is mcpx_search's structuredContent.
type searchResult struct {
	Tools []struct {
		Name        string          `json:"name"`
		Server      string          `json:"server"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

// TestMetaSearch: mcpx_search finds tools by words and returns each with
// its input schema, in structuredContent and in the text, for hosts of both
// eras.
func TestMetaSearch(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		search := func(query string, meta map[string]any) (searchResult, string) {
			t.Helper()
			params := map[string]any{"name": "mcpx_search", "arguments": map[string]any{"query": query}}
			if meta != nil {
				params["_meta"] = meta
			}
			res := h.Result(h.Request("tools/call", params), harness.RelayWait)
			var sr searchResult
			if err := json.Unmarshal(harness.RawMember(t, res, "structuredContent"), &sr); err != nil {
				t.Fatalf("mcpx_search structuredContent: %v in %s", err, res)
			}
			if meta != nil && string(harness.RawMember(t, res, "resultType")) != `"complete"` {
				t.Errorf("2026-07-28 host: mcpx_search result without resultType complete: %s", res)
			}
			return sr, harness.FirstText(t, res)
		}

		_, defs := harness.ListToolDefs(t, h, map[string]any{"_meta": mcpxtest.ModernMeta(nil)})
		exportSchema := harness.RawMember(t, defs["demo__export"], "inputSchema")
		echoSchema := harness.RawMember(t, json.RawMessage(demo.EchoToolJSON), "inputSchema")

		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			var meta map[string]any
			if era == "2026-07-28" {
				meta = mcpxtest.ModernMeta(nil)
			} else {
				h.Initialize(era)
			}
			sr, text := search("export progress", meta)
			if len(sr.Tools) == 0 {
				t.Fatalf("%s: mcpx_search found nothing for \"export progress\"; text %q", era, text)
			}
			first := sr.Tools[0]
			if first.Name != "demo__export" || first.Server != "demo" {
				t.Errorf("%s: first hit %s (server %s), want demo__export; hits %+v", era, first.Name, first.Server, sr.Tools)
			}
			if string(first.InputSchema) != string(exportSchema) {
				t.Errorf("%s: demo__export inputSchema\n got %s\nwant %s", era, first.InputSchema, exportSchema)
			}
			if !strings.HasPrefix(text, "demo__export: ") || !strings.Contains(text, "input: "+string(exportSchema)) {
				t.Errorf("%s: mcpx_search text does not start with demo__export and its schema:\n%s", era, text)
			}

			// The 20-digit maximum and the unknown keys of echo's schema
			// survive the search too.
			sr, _ = search("echo", meta)
			if len(sr.Tools) == 0 || sr.Tools[0].Name != "demo__echo" || string(sr.Tools[0].InputSchema) != string(echoSchema) {
				t.Errorf("%s: mcpx_search echo: %+v, want demo__echo first with schema %s", era, sr.Tools, echoSchema)
			}
		}
	})
}

// TestMetaCallProgress: mcpx_call relays the named tool's progress under
// the host's own token (string or integer, its JSON type kept), in order,
// before the result, and the result is the one a direct call gets.
func TestMetaCallProgress(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")
		args := map[string]any{"seconds": 0.3, "steps": 3, "records": 12345678901}
		direct := h.Result(h.Request("tools/call", map[string]any{"name": "demo__export", "arguments": args}), harness.RelayWait)
		results := map[string]int{} // token -> index of its call's result among the received
		for i, token := range []string{`"meta-call-token"`, `4242`} {
			mark := len(h.Received())
			id := jsonrpc.NewIntID(int64(500 + i))
			h.SendRaw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"tools/call","params":{"name":"mcpx_call","arguments":{"name":"demo__export","arguments":{"seconds":0.3,"steps":3,"records":12345678901}},"_meta":{"progressToken":` + token + `}}}`)
			res := h.Result(id, harness.RelayWait)
			if string(res) != string(direct) {
				t.Errorf("token %s: mcpx_call result\n got %s\nwant %s (the direct call's)", token, res, direct)
			}
			var values []float64
			for j, r := range h.Received()[mark:] {
				if r.Msg.IsResponse() && r.Msg.ID == id {
					results[token] = mark + j
					break
				}
				if r.Msg.Method != "notifications/progress" {
					continue
				}
				if got := string(harness.RawMember(t, r.Msg.Params, "progressToken")); got != token {
					t.Errorf("progress under token %s, want %s: %s", got, token, r.Raw)
				}
				var p struct{ Progress, Total float64 }
				if err := json.Unmarshal(r.Msg.Params, &p); err != nil {
					t.Errorf("progress params %s: %v", r.Msg.Params, err)
				}
				values = append(values, p.Progress)
				if p.Total != 3 {
					t.Errorf("progress total %v, want 3: %s", p.Total, r.Raw)
				}
			}
			if len(values) != 3 || values[0] != 1 || values[1] != 2 || values[2] != 3 {
				t.Errorf("token %s: progress before the result %v, want [1 2 3]", token, values)
			}
		}
		// Nothing under either token after its call's result.
		for i, r := range h.Received() {
			if r.Msg.Method != "notifications/progress" {
				continue
			}
			if end, ok := results[string(harness.RawMember(t, r.Msg.Params, "progressToken"))]; ok && i > end {
				t.Errorf("progress after its call's result: %s", r.Raw)
			}
		}
		// Upstream, mcpx_call was an export call with mcpx's own token.
		var calls []demo.Event
		for _, ev := range e.Records("demo") {
			if ev.Event == demo.EventRequest && ev.Tool == "export" {
				calls = append(calls, ev)
			}
		}
		if len(calls) != 3 {
			t.Fatalf("the demo got %d export calls, want 3", len(calls))
		}
		for _, ev := range calls[1:] {
			if tok := string(ev.ProgressToken); !strings.HasPrefix(tok, `"mcpx-`) {
				t.Errorf("upstream progress token %s, want one mcpx minted", tok)
			}
		}
	})
}

// TestMetaCallUnknownTool: mcpx_call of a tool that does not exist is a
// tool error (isError) telling the model to use mcpx_search, not a
// protocol error, whatever the name looks like.
func TestMetaCallUnknownTool(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")
		for _, name := range []string{"no_such_tool", "demo__no_such_tool", "nosuchserver__echo"} {
			id := h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{"name": name, "arguments": map[string]any{}}})
			m := h.Response(id, harness.RelayWait)
			if m.Error != nil {
				t.Errorf("mcpx_call %q: a protocol error %d %q, want a tool result with isError", name, m.Error.Code, m.Error.Message)
				continue
			}
			if string(harness.RawMember(t, m.Result, "isError")) != "true" {
				t.Errorf("mcpx_call %q: result without isError true: %s", name, m.Result)
			}
			if text := harness.FirstText(t, m.Result); !strings.Contains(text, name) || !strings.Contains(text, "mcpx_search") {
				t.Errorf("mcpx_call %q: text %q should name the tool and point to mcpx_search", name, text)
			}
		}
		// Without a name at all, too.
		res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{}}), harness.RelayWait)
		if string(harness.RawMember(t, res, "isError")) != "true" {
			t.Errorf("mcpx_call without a name: %s", res)
		}
	})
}

// TestMetaCallTimeout: mcpx_call's timeoutSeconds and idleTimeoutSeconds
// shorten the configured timeouts, never lengthen them. The host gets an
// error naming the timer and its interval, and the upstream a cancellation
// with that reason.
func TestMetaCallTimeout(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil,
			mcpxtest.Demo{Name: "demo", Fields: map[string]any{"maxTimeout": "20s"}},
			mcpxtest.Demo{Name: "short", Fields: map[string]any{"maxTimeout": "1s"}},
		))
		h.Initialize("2025-11-25")
		cases := []struct {
			server, arg string
			secs        float64
			kind        string
			afterMs     int64
			reason      string
		}{
			{"demo", "timeoutSeconds", 0.5, "hard_timeout", 500, "hard maximum of 500ms reached"},
			{"short", "timeoutSeconds", 60, "hard_timeout", 1000, "hard maximum of 1s reached"},
			{"demo", "idleTimeoutSeconds", 0.3, "idle_timeout", 300, "idle timeout: no progress for 300ms"},
		}
		for _, c := range cases {
			start := time.Now()
			id := h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{
				"name": c.server + "__wait", "arguments": map[string]any{"seconds": 25}, c.arg: c.secs,
			}})
			m := h.Response(id, harness.RelayWait)
			took := time.Since(start)
			rpcErr := harness.WantError(t, c.server+" "+c.arg, m, -31001, id.String(), c.reason)
			var data struct {
				Mcpx struct {
					Kind    string `json:"kind"`
					AfterMs int64  `json:"afterMs"`
				} `json:"mcpx"`
			}
			if err := json.Unmarshal(rpcErr.Data, &data); err != nil || data.Mcpx.Kind != c.kind || data.Mcpx.AfterMs != c.afterMs {
				t.Errorf("%s %s=%g: error data %s, want kind %s afterMs %d", c.server, c.arg, c.secs, rpcErr.Data, c.kind, c.afterMs)
			}
			ev := e.WaitRecord(c.server, harness.RelayWait, func(ev demo.Event) bool {
				return ev.Event == demo.EventCancelled && ev.Reason == c.reason
			})
			if ev.Known == nil || !*ev.Known || ev.Tool != "wait" {
				t.Errorf("%s: the upstream's cancellation did not match the running wait call: %+v", c.server, ev)
			}
			t.Logf("mcpx_call %s %s=%g: %s after %v", c.server, c.arg, c.secs, c.kind, took.Round(time.Millisecond))
		}
	})
}
