package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// toolsJSON is a listing with a valid annotated tool, a plain one, and two
// whose annotations are invalid.
const toolsJSON = `{"tools":[
 {"name":"execute_sql","inputSchema":{"type":"object","properties":{
   "region":{"type":"string","x-mcp-header":"Region"},
   "opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
   "n":{"type":"integer","x-mcp-header":"N"},
   "query":{"type":"string"}}}},
 {"name":"plain","inputSchema":{"type":"object"}},
 {"name":"bad_number","inputSchema":{"type":"object","properties":{"p":{"type":"number","x-mcp-header":"P"}}}},
 {"name":"bad_dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}}
]}`

// TestHTTPModernRequests: a 2026-07-28 session. Every POST carries
// MCP-Protocol-Version matching the body's _meta, Mcp-Method, Mcp-Name where
// the method has one, and the Mcp-Param headers of the tool's annotations;
// no session id, no GET, no DELETE, no notification ever. Tools with invalid
// annotations are left out of the list, and calling one anyway is refused
// without a request.
func TestHTTPModernRequests(t *testing.T) {
	up := newScripted(t, modernScript(func(w http.ResponseWriter, in *inbound) {
		switch in.rpcMethod() {
		case mcp.MethodToolsList:
			replyJSON(w, 200, result(in, toolsJSON))
		case mcp.MethodToolsCall:
			sseOpen(w)
			sseSend(w, event("", progress(in, 1)))
			sseSend(w, event("", result(in, `{"content":[{"type":"text","text":"ok"}]}`)))
		default:
			replyJSON(w, 404, rpcError(in, -32601, "Method not found", ""))
		}
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL, Headers: map[string]string{"X-Api-Key": "k"}}, nil)
	s := session(t, p)
	if !s.Modern() || s.ServerInfo().Name != "scripted-modern" {
		t.Fatalf("version %q, server %+v", s.Version(), s.ServerInfo())
	}
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"execute_sql", "plain"}) {
		t.Errorf("tools %q, want the two valid ones", names)
	}

	var prog []json.RawMessage
	var mu sync.Mutex
	caps := json.RawMessage(`{"elicitation":{"form":{}}}`)
	r, err := s.Start(mcp.MethodToolsCall, mustObject(`{"name":"execute_sql","arguments":{"region":"Hello, 世界","opts":{"tenant":"acme"},"n":7,"query":"SELECT 1"}}`),
		caps, StartOptions{OnProgress: func(p json.RawMessage) { mu.Lock(); prog = append(prog, p); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	if res, err := r.Result(); err != nil || !strings.Contains(string(res), `"ok"`) {
		t.Fatalf("call: %s %v", res, err)
	}
	mu.Lock()
	if len(prog) != 1 {
		t.Errorf("%d progress notifications, want 1", len(prog))
	}
	mu.Unlock()
	in := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
	for k, want := range map[string]string{
		"MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "execute_sql",
		"Mcp-Param-Region":     "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"Mcp-Param-Tenant":     "acme",
		"Mcp-Param-N":          "7",
		"X-Api-Key":            "k",
		"Accept":               "application/json, text/event-stream",
	} {
		if got := in.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	var body struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(in.Body, &body); err != nil {
		t.Fatal(err)
	}
	if string(body.Params.Meta[mcp.MetaProtocolVersion]) != `"2026-07-28"` || string(body.Params.Meta[mcp.MetaClientCapabilities]) != string(caps) ||
		body.Params.Meta[mcp.MetaClientInfo] == nil {
		t.Errorf("the call's _meta: %s", in.Body)
	}

	// A rejected tool is not called.
	_, err = call(t, s, mcp.MethodToolsCall, `{"name":"bad_number","arguments":{"p":1.5}}`)
	if err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("calling a rejected tool: %v", err)
	}
	if n := up.count(func(in *inbound) bool {
		return strings.Contains(string(in.Body), "bad_number") && in.rpcMethod() == mcp.MethodToolsCall
	}); n != 0 {
		t.Errorf("the rejected tool was called")
	}

	stopPool(t, p)
	for _, in := range up.requests() {
		if in.Method != http.MethodPost || !in.Msg.IsRequest() {
			t.Errorf("a modern session sent %s %s", in.Method, in.Body)
		}
		if in.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("a modern request carried a session id")
		}
		if in.Header.Get("Mcp-Method") != in.rpcMethod() || in.Header.Get("MCP-Protocol-Version") != "2026-07-28" {
			t.Errorf("%s: headers %v", in.Body, in.Header)
		}
	}
}

// TestHTTPConnectionReused: calls answered on event streams that the
// server ends after the response go out one after another on one
// connection, in both eras: mcpx reads each stream to its end, so the
// connection goes back to the pool instead of being closed (a new TCP
// connection a call).
func TestHTTPConnectionReused(t *testing.T) {
	for _, era := range []struct {
		name   string
		script func(other func(w http.ResponseWriter, in *inbound)) func(http.ResponseWriter, *inbound)
	}{
		{"2026-07-28", modernScript},
		{"2025-06-18", func(other func(w http.ResponseWriter, in *inbound)) func(http.ResponseWriter, *inbound) {
			return legacyScript("2025-06-18", "sess-1", other)
		}},
	} {
		t.Run(era.name, func(t *testing.T) {
			ended := make(chan struct{}, 1) // a call's stream has ended
			up := newScripted(t, era.script(func(w http.ResponseWriter, in *inbound) {
				switch in.rpcMethod() {
				case mcp.MethodToolsList:
					replyJSON(w, 200, result(in, toolsJSON))
				case mcp.MethodToolsCall:
					defer func() { ended <- struct{}{} }()
					sseOpen(w)
					sseSend(w, event("", progress(in, 1)))
					sseSend(w, event("", result(in, `{"content":[{"type":"text","text":"ok"}]}`)))
					// The stream ends a moment after the response, as a
					// server's does that finishes its work after answering:
					// the end is not already there when mcpx reads the response.
					time.Sleep(5 * time.Millisecond)
				default:
					replyJSON(w, 404, rpcError(in, -32601, "Method not found", ""))
				}
			}))
			p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
			s := session(t, p)
			const calls = 5
			for range calls {
				if res, err := call(t, s, mcp.MethodToolsCall, `{"name":"plain","arguments":{},"_meta":{"progressToken":"p"}}`); err != nil || !strings.Contains(string(res), `"ok"`) {
					t.Fatalf("call: %s %v", res, err)
				}
				<-ended
				// For mcpx to read the stream's end: time, not the event,
				// which nothing shows the test; the check below allows one
				// end read late.
				time.Sleep(20 * time.Millisecond)
			}
			conns := map[string]bool{}
			for _, in := range up.requests() {
				if in.rpcMethod() == mcp.MethodToolsCall {
					conns[in.Remote] = true
				}
			}
			// One, unless the machine was so slow that the end of a stream
			// was read after the next call began; never one per call.
			if len(conns) > 2 {
				t.Errorf("%d calls, one at a time, came on %d connections, want 1", calls, len(conns))
			}
			stopPool(t, p)
		})
	}
}

// TestHTTPModernCancel: cancelling a modern request closes its stream: the
// server's request context ends, and no notifications/cancelled is ever
// posted.
func TestHTTPModernCancel(t *testing.T) {
	var up *scripted
	up = newScripted(t, modernScript(func(w http.ResponseWriter, in *inbound) {
		if in.rpcMethod() == mcp.MethodToolsList {
			replyJSON(w, 200, result(in, toolsJSON))
			return
		}
		sseOpen(w)
		sseSend(w, event("", progress(in, 1)))
		up.hold(in)
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	r := startProgressing(t, s)
	in := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
	at := time.Now()
	if !s.Cancel(r, "idle timeout") {
		t.Error("Cancel reported the upstream not told")
	}
	select {
	case <-in.Ctx.Done():
		t.Logf("the server saw the stream end %v after Cancel", time.Since(at))
	case <-time.After(wait):
		t.Fatal("the server's request context did not end")
	}
	time.Sleep(settle) // time: notifications/cancelled must not be posted
	if n := up.count(isRPC(mcp.MethodCancelled)); n != 0 {
		t.Errorf("%d notifications/cancelled posted to a 2026-07-28 server", n)
	}
}

// TestHTTPModernHeaderMismatch: a call refused with HeaderMismatch (-32020)
// makes mcpx list the tools again and retry once with the headers the new
// listing gives; a second refusal is the answer.
func TestHTTPModernHeaderMismatch(t *testing.T) {
	var mu sync.Mutex
	annotated := false
	up := newScripted(t, modernScript(func(w http.ResponseWriter, in *inbound) {
		mu.Lock()
		a := annotated
		mu.Unlock()
		switch in.rpcMethod() {
		case mcp.MethodToolsList:
			schema := `{"type":"object","properties":{"region":{"type":"string"}}}`
			if a {
				schema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
			}
			replyJSON(w, 200, result(in, `{"tools":[{"name":"t","inputSchema":`+schema+`}]}`))
		case mcp.MethodToolsCall:
			if in.Header.Get("Mcp-Param-Region") != "eu" {
				replyJSON(w, 400, rpcError(in, mcp.CodeHeaderMismatch, "Header mismatch: Mcp-Param-Region missing", ""))
				return
			}
			replyJSON(w, 200, result(in, `{"content":[]}`))
		}
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The server's schema changes: the call is refused, re-listed, retried.
	mu.Lock()
	annotated = true
	mu.Unlock()
	if _, err := call(t, s, mcp.MethodToolsCall, `{"name":"t","arguments":{"region":"eu"}}`); err != nil {
		t.Fatalf("call after the schema changed: %v", err)
	}
	calls := filter(up.requests(), isRPC(mcp.MethodToolsCall))
	if len(calls) != 2 || calls[0].Header.Get("Mcp-Param-Region") != "" || calls[1].Header.Get("Mcp-Param-Region") != "eu" {
		t.Errorf("calls: %d, headers %v", len(calls), calls)
	}
	if string(calls[0].Msg.ID.Raw()) != string(calls[1].Msg.ID.Raw()) {
		t.Errorf("the retry changed the request id")
	}
	lists := filter(up.requests(), isRPC(mcp.MethodToolsList))
	if len(lists) != 2 || !strings.Contains(string(lists[1].Body), `"mcpx-list-`) || !strings.Contains(string(lists[1].Body), mcp.MetaProtocolVersion) {
		t.Errorf("listings: %d; mcpx's own: %s", len(lists), lists[len(lists)-1].Body)
	}

	// The annotation goes away again but the server still wants it: one
	// retry only, then the refusal is the answer.
	mu.Lock()
	annotated = false
	mu.Unlock()
	_, err := call(t, s, mcp.MethodToolsCall, `{"name":"t","arguments":{"region":"us"}}`)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeHeaderMismatch {
		t.Errorf("err = %v, want the server's HeaderMismatch", err)
	}
	if n := len(filter(up.requests(), isRPC(mcp.MethodToolsCall))); n != 4 {
		t.Errorf("%d calls in all, want 4 (two tries each)", n)
	}
}

func filter(ins []*inbound, match func(*inbound) bool) []*inbound {
	var out []*inbound
	for _, in := range ins {
		if match(in) {
			out = append(out, in)
		}
	}
	return out
}

// TestHTTPModernCallBeforeListing: a call that reaches a session that never
// listed its tools (a host naming server__tool directly) lists them first,
// to send the tool's headers.
func TestHTTPModernCallBeforeListing(t *testing.T) {
	up := newScripted(t, modernScript(func(w http.ResponseWriter, in *inbound) {
		switch in.rpcMethod() {
		case mcp.MethodToolsList:
			sseOpen(w) // the listing answered as a stream, for a change
			sseSend(w, event("", result(in, toolsJSON)))
		case mcp.MethodToolsCall:
			replyJSON(w, 200, result(in, `{"content":[]}`))
		}
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)
	if _, err := call(t, s, mcp.MethodToolsCall, `{"name":"execute_sql","arguments":{"region":"us-west1"}}`); err != nil {
		t.Fatal(err)
	}
	in := up.waitFor("the call", isRPC(mcp.MethodToolsCall))
	if in.Header.Get("Mcp-Param-Region") != "us-west1" {
		t.Errorf("the call's headers: %v", in.Header)
	}
	if n := up.count(isRPC(mcp.MethodToolsList)); n != 1 {
		t.Errorf("%d listings, want 1", n)
	}
	// The next call does not list again.
	if _, err := call(t, s, mcp.MethodToolsCall, `{"name":"plain"}`); err != nil {
		t.Fatal(err)
	}
	if n := up.count(isRPC(mcp.MethodToolsList)); n != 1 {
		t.Errorf("%d listings after two calls, want 1", n)
	}
}

// TestHTTPModernStreamEndsEarly: a modern stream that ends before the
// response cannot be resumed: the request fails, saying so.
func TestHTTPModernStreamEndsEarly(t *testing.T) {
	up := newScripted(t, modernScript(func(w http.ResponseWriter, in *inbound) {
		sseOpen(w)
		sseSend(w, "id: 1\nretry: 10\ndata: \n\n"+event("2", progress(in, 1)))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	_, err := call(t, session(t, p), "tools/list", `{}`)
	if err == nil || !strings.Contains(err.Error(), "cannot be resumed") {
		t.Fatalf("err = %v", err)
	}
	if n := up.count(func(in *inbound) bool { return in.Method == http.MethodGet }); n != 0 {
		t.Errorf("%d GETs to a modern server", n)
	}
}
