package relay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// badInputWait bounds every wait of these tests.
const badInputWait = 30 * time.Second

var pingSeq atomic.Int64

// sendThenPing writes lines exactly as given, then a ping, and returns what
// the host received from the first line on, before the ping's answer. mcpx
// handles a host's parse errors, invalid requests, notifications, pings and
// unroutable requests in the order it reads them, so whatever the lines
// caused has arrived once the ping is answered; the ping's answer also
// shows the connection is still usable.
func sendThenPing(t *testing.T, h *mcpxtest.Host, lines ...string) []mcpxtest.Received {
	t.Helper()
	mark := len(h.Received())
	for _, l := range lines {
		h.SendRaw(l)
	}
	id := jsonrpc.NewStringID(fmt.Sprintf("ping-%d", pingSeq.Add(1)))
	h.SendRaw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"ping"}`)
	if m := h.Response(id, badInputWait); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("ping after %q: got %s, want an empty result", lines, m.Encode())
	}
	got := h.Received()[mark:]
	last := got[len(got)-1]
	if !last.Msg.IsResponse() || last.Msg.ID != id {
		t.Fatalf("after %q: the ping's answer is not the last message: %s", lines, last.Raw)
	}
	return got[:len(got)-1]
}

// wantOneError checks that got is exactly one JSON-RPC error with code, the
// raw id wantID (e.g. `null`, `77`, `"dup"`), and a message containing each
// of words.
func wantOneError(t *testing.T, what string, got []mcpxtest.Received, code int64, wantID string, words ...string) *jsonrpc.Error {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("%s: got %d messages, want exactly one error:\n%s", what, len(got), rawLines(got))
	}
	return harness.WantError(t, what, got[0].Msg, code, wantID, words...)
}

// countToolRequests counts the tools/call requests for tool that demo
// server name has received.
func countToolRequests(e *mcpxtest.Env, name, tool string) int {
	n := 0
	for _, ev := range e.Records(name) {
		if ev.Event == demo.EventRequest && ev.Method == "tools/call" && ev.Tool == tool {
			n++
		}
	}
	return n
}

func rawLines(rs []mcpxtest.Received) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s\n", r.Raw)
	}
	return b.String()
}

// modernMetaJSON is the _meta of a 2026-07-28 request asking for version.
func modernMetaJSON(version string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientInfo":{"name":"badinput","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
}

// quietNotifications are notifications, well formed or not, that must get
// no reply at all.
var quietNotifications = []string{
	`{"jsonrpc":"2.0","method":"notifications/no_such_notification","params":{}}`,
	`{"jsonrpc":"2.0","method":"no/such/method"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"not an object"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":42}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"not":"an id"},"reason":7}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no request id"}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999999,"reason":"nothing runs under this id"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[1],"progress":"lots"}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized","params":[1,2,3]}`,
	`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":null}`,
}

// TestHostBadInput sends mcpx one malformed or unroutable message after
// another on one connection and checks each answer: the JSON-RPC error
// code, the id (null only when it cannot be read), a message that says
// what is wrong, never a reply to a notification, and a connection that
// keeps working after each.
func TestHostBadInput(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))

		// Before initialize, a request without the 2026-07-28 _meta
		// cannot be served, and mcpx says how to fix it.
		got := sendThenPing(t, h, `{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"demo__echo","arguments":{}}}`)
		wantOneError(t, "tools/call before initialize", got, jsonrpc.CodeInvalidParams, "101", "initialize", "2026-07-28", "io.modelcontextprotocol/protocolVersion")

		// A 2026-07-28 request naming a version mcpx does not serve.
		for _, v := range []string{"2099-01-01", "2025-06-18"} {
			got = sendThenPing(t, h, `{"jsonrpc":"2.0","id":102,"method":"tools/list","params":{"_meta":`+modernMetaJSON(v)+`}}`)
			rpcErr := wantOneError(t, "unsupported _meta version "+v, got, -32022, "102")
			var data struct {
				Supported []string `json:"supported"`
				Requested *string  `json:"requested"`
			}
			if err := json.Unmarshal(rpcErr.Data, &data); err != nil {
				t.Fatalf("-32022 data %s: %v", rpcErr.Data, err)
			}
			if !slices.Contains(data.Supported, "2026-07-28") {
				t.Errorf("-32022 data.supported = %q, want it to name 2026-07-28", data.Supported)
			}
			if data.Requested == nil || *data.Requested != v {
				t.Errorf("-32022 data.requested = %v, want %q (data %s)", data.Requested, v, rpcErr.Data)
			}
		}

		// An unknown method in a well-formed 2026-07-28 request.
		got = sendThenPing(t, h, `{"jsonrpc":"2.0","id":103,"method":"no/such/method","params":{"_meta":`+modernMetaJSON("2026-07-28")+`}}`)
		wantOneError(t, "unknown method (2026-07-28 request)", got, jsonrpc.CodeMethodNotFound, "103", "no/such/method")

		// Lines that are not JSON: -32700, id null.
		for _, line := range []string{`{"jsonrpc":"2.0","id":104,"method":"ping"`, `this is not json`, `{"jsonrpc":"2.0","id":104,"method":"ping"}}`} {
			got = sendThenPing(t, h, line)
			wantOneError(t, fmt.Sprintf("malformed line %q", line), got, jsonrpc.CodeParseError, "null")
		}

		// Valid JSON that is no JSON-RPC object: -32600, id null.
		for _, line := range []string{`42`, `"x"`, `true`, `null`} {
			got = sendThenPing(t, h, line)
			wantOneError(t, fmt.Sprintf("non-object %s", line), got, jsonrpc.CodeInvalidRequest, "null")
		}

		// Invalid requests whose id can be read keep it.
		got = sendThenPing(t, h, `{"jsonrpc":"1.0","id":105,"method":"ping"}`)
		wantOneError(t, `"jsonrpc":"1.0"`, got, jsonrpc.CodeInvalidRequest, "105", "jsonrpc")
		got = sendThenPing(t, h, `{"id":"no-version","method":"ping"}`)
		wantOneError(t, `no "jsonrpc" member`, got, jsonrpc.CodeInvalidRequest, `"no-version"`, "jsonrpc")
		got = sendThenPing(t, h, `{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`)
		wantOneError(t, "an object as id", got, jsonrpc.CodeInvalidRequest, "null", "id")

		// A batch is refused as a whole, clearly, and none of its members
		// is run or answered.
		got = sendThenPing(t, h, `[{"jsonrpc":"2.0","id":107,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
		wantOneError(t, "batch", got, jsonrpc.CodeInvalidRequest, "null", "batch")

		// Notifications, unknown or malformed, get nothing at all.
		for _, line := range quietNotifications {
			if got = sendThenPing(t, h, line); len(got) != 0 {
				t.Errorf("notification %s (before initialize) was answered:\n%s", line, rawLines(got))
			}
		}

		h.Initialize("2025-11-25")

		for _, line := range quietNotifications {
			if got = sendThenPing(t, h, line); len(got) != 0 {
				t.Errorf("notification %s (after initialize) was answered:\n%s", line, rawLines(got))
			}
		}

		got = sendThenPing(t, h, `{"jsonrpc":"2.0","id":108,"method":"no/such/method","params":{}}`)
		wantOneError(t, "unknown method (legacy)", got, jsonrpc.CodeMethodNotFound, "108", "no/such/method")

		// An unknown tool is -32602 "Unknown tool", whether or not its
		// name looks like one of a configured server.
		h.SendRaw(`{"jsonrpc":"2.0","id":109,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
		harness.WantError(t, "unknown tool", h.Response(jsonrpc.NewIntID(109), badInputWait), jsonrpc.CodeInvalidParams, "109", "Unknown tool", "no_such_tool")
		h.SendRaw(`{"jsonrpc":"2.0","id":110,"method":"tools/call","params":{"name":"demo__no_such_tool","arguments":{}}}`)
		harness.WantError(t, "unknown tool of a known server", h.Response(jsonrpc.NewIntID(110), badInputWait), jsonrpc.CodeInvalidParams, "110", "Unknown tool")

		// A request id that is in flight already is refused; the first
		// request is unharmed and answered later.
		dup := jsonrpc.NewStringID("dup")
		h.SendRaw(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"demo__sleep_then","arguments":{"seconds":1.5,"text":"the first dup"}}}`)
		e.WaitRecord("demo", badInputWait, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "sleep_then" })
		h.SendRaw(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"demo__echo","arguments":{"second":true}}}`)
		first := h.Response(dup, badInputWait)
		harness.WantError(t, "duplicate in-flight id", first, jsonrpc.CodeInvalidRequest, `"dup"`, "in use")
		h.WaitFor(badInputWait, "the first dup's result", func(r mcpxtest.Received) bool {
			return r.Msg.IsResponse() && r.Msg.ID == dup && r.Msg.Error == nil
		})
		var answers []string
		for _, r := range h.Received() {
			if r.Msg.IsResponse() && r.Msg.ID == dup {
				answers = append(answers, string(r.Raw))
			}
		}
		if len(answers) != 2 || !strings.Contains(answers[1], "the first dup") {
			t.Errorf("answers to id \"dup\": want the -32600, then the first request's result:\n%s", strings.Join(answers, "\n"))
		}
		if n := countToolRequests(e, "demo", "echo"); n != 0 {
			t.Errorf("the refused duplicate reached the upstream (%d echo calls)", n)
		}

		// Still usable for real work.
		res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"after": "all that"}}), badInputWait)
		if !strings.Contains(string(res), `"structuredContent":{"after":"all that"}`) {
			t.Errorf("echo after the bad input: %s", res)
		}
	})
}

// TestHostOversizeMessage configures maxMessageBytes 4096 and sends a 10 KB
// request: mcpx answers -32600 naming the limit, with the request's id, and
// the connection keeps working. An upstream answer over the limit fails
// its call with an error naming the limit, and the upstream stays usable.
func TestHostOversizeMessage(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(map[string]any{"maxMessageBytes": 4096}, mcpxtest.Demo{Name: "demo"}))
		h.Initialize("2025-11-25")

		big := strings.Repeat("x", 10<<10)
		line := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"demo__echo","arguments":{"big":"` + big + `"}}}`
		got := sendThenPing(t, h, line)
		wantOneError(t, "10 KB request", got, jsonrpc.CodeInvalidRequest, "77", "4096")
		if n := countToolRequests(e, "demo", "echo"); n != 0 {
			t.Errorf("the oversize request reached the upstream")
		}

		// Just under the limit on the way in, over it on the way back:
		// echo returns its arguments twice (text and structuredContent).
		mid := strings.Repeat("y", 3000)
		id := h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"mid": mid}})
		m := h.Response(id, badInputWait)
		rpcErr := harness.WantError(t, "oversize upstream answer", m, -31000, id.String(), "demo", "4096")
		t.Logf("oversize upstream answer: %d %s", rpcErr.Code, rpcErr.Message)

		res := h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"small": 1}}), badInputWait)
		if !strings.Contains(string(res), `"structuredContent":{"small":1}`) {
			t.Errorf("echo after the oversize messages: %s", res)
		}
	})
}
