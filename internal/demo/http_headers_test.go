package demo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

func TestHTTPModernValidation(t *testing.T) {
	p := startHTTP(t, nil)
	call := modernCall("1", "echo", `{}`, "")
	tests := []struct {
		name   string
		h      headers
		body   string
		status int
		code   int64
	}{
		{"no version header", modernHeaders("tools/call", "echo").with(headers{"MCP-Protocol-Version": ""}), call, 400, mcp.CodeHeaderMismatch},
		{"version header mismatch", modernHeaders("tools/call", "echo").with(headers{"MCP-Protocol-Version": "2025-11-25"}), call, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Method", modernHeaders("", "echo"), call, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Method mismatch", modernHeaders("tools/list", "echo"), call, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Name", modernHeaders("tools/call", ""), call, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name mismatch", modernHeaders("tools/call", "raw"), call, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name bad base64", modernHeaders("tools/call", "=?base64?!!!?="), call, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name non-ASCII", modernHeaders("tools/call", "éc"), call, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name base64", modernHeaders("tools/call", b64("echo")), call, 200, 0},
		{"unsupported version", modernHeaders("tools/call", "echo").with(headers{"MCP-Protocol-Version": "2099-01-01"}),
			callReq("1", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`), 400, mcp.CodeUnsupportedProtocolVersion},
		{"legacy version in _meta", modernHeaders("tools/call", "echo").with(headers{"MCP-Protocol-Version": "2025-11-25"}),
			callReq("1", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`), 400, mcp.CodeUnsupportedProtocolVersion},
		{"no _meta version", modernHeaders("tools/call", "echo"), callReq("1", "echo", `{}`, ""), 400, jsonrpc.CodeInvalidParams},
		{"no capabilities", modernHeaders("tools/call", "echo"), callReq("1", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), 400, jsonrpc.CodeInvalidParams},
		{"unknown method", modernHeaders("resources/list", ""), modernReq("1", "resources/list", ""), 404, jsonrpc.CodeMethodNotFound},
		{"region header mismatch", modernHeaders("tools/call", "region_echo").with(headers{"Mcp-Param-Region": "eu"}), modernCall("1", "region_echo", `{"region":"us"}`, ""), 400, mcp.CodeHeaderMismatch},
		{"region header missing", modernHeaders("tools/call", "region_echo"), modernCall("1", "region_echo", `{"region":"us"}`, ""), 400, mcp.CodeHeaderMismatch},
		{"region header without the argument", modernHeaders("tools/call", "region_echo").with(headers{"Mcp-Param-Region": "us"}), modernCall("1", "region_echo", `{}`, ""), 400, mcp.CodeHeaderMismatch},
		{"region header, any case", modernHeaders("tools/call", "region_echo").with(headers{"mcp-param-region": "us"}), modernCall("1", "region_echo", `{"region":"us"}`, ""), 200, 0},
		{"bad header tool: not checked", modernHeaders("tools/call", "bad_header_tool"), modernCall("1", "bad_header_tool", `{"amount":1.5}`, ""), 200, 0},
	}
	for _, tt := range tests {
		code, e := p.status(http.MethodPost, tt.h, tt.body)
		if code != tt.status || (tt.code == 0) != (e == nil) || e != nil && e.Code != tt.code {
			t.Errorf("%s: %d %v, want %d %d", tt.name, code, e, tt.status, tt.code)
		}
		if tt.code == mcp.CodeUnsupportedProtocolVersion && (e == nil || !strings.Contains(string(e.Data), `"supported":["2026-07-28"`)) {
			t.Errorf("%s: error data %v", tt.name, e)
		}
	}
}

func TestHTTPParamHeader(t *testing.T) {
	p := startHTTP(t, nil)
	for _, region := range []string{"us-west1", "Zürich ", "=?base64?literal?="} {
		value := region
		if region != "us-west1" {
			value = b64(region)
		}
		args := string(marshal(map[string]string{"region": region}))
		out := decodeTool(t, p.jsonAnswer(modernHeaders("tools/call", "region_echo").with(headers{"Mcp-Param-Region": value}), modernCall("1", "region_echo", args, ""), 200))
		var got struct{ Region, Header string }
		json.Unmarshal(out.StructuredContent, &got)
		if got.Region != region || got.Header != region {
			t.Errorf("region_echo %q: %s", region, out.StructuredContent)
		}
		e := p.event(func(e Event) bool { return e.Event == EventRequest && e.Tool == "region_echo" })
		if e.Headers["Mcp-Param-Region"] != region {
			t.Errorf("recorded Mcp-Param-Region %q, want %q", e.Headers["Mcp-Param-Region"], region)
		}
	}
}

func TestHeaderParams(t *testing.T) {
	params, err := headerParams(httpToolDefs()["region_echo"])
	if err != nil || len(params) != 1 || params[0].name != "Region" || params[0].typ != "string" || !slices.Equal(params[0].path, []string{"region"}) {
		t.Errorf("region_echo: %+v, %v", params, err)
	}
	if _, err := headerParams(httpToolDefs()["bad_header_tool"]); err == nil {
		t.Error("bad_header_tool's annotation is valid")
	}
	if _, ok := headerParamsOf()["bad_header_tool"]; ok {
		t.Error("bad_header_tool's headers are checked")
	}
	def := func(schema string) string { return `{"name":"t","inputSchema":` + schema + `}` }
	valid := []string{
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"}}}}}`,
		`{"type":"object","properties":{"a":{"type":"boolean","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"B-2"}}}`,
		`{"type":"object"}`,
	}
	for _, s := range valid {
		if _, err := headerParams(def(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	invalid := []string{
		`{"type":"object","x-mcp-header":"Root"}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`,
		`{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
	}
	for _, s := range invalid {
		if _, err := headerParams(def(s)); err == nil {
			t.Errorf("%s: valid", s)
		}
	}
}

func TestHTTPPingClient(t *testing.T) {
	p := startHTTP(t, &Options{PingClient: true})
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	for _, answer := range []string{`"result":{}`, `"error":{"code":-32601,"message":"no ping here"}`} {
		s := p.openSSE(context.Background(), h, callReq("2", "echo", `{"x":1}`, ""))
		ping, _ := s.next()
		if ping == nil || !ping.IsRequest() || ping.Method != "ping" || !strings.HasPrefix(ping.ID.String(), `"demo-ping-`) {
			t.Fatalf("first event %v, want a ping request", ping)
		}
		p.event(kind(EventPingClient))
		p.accepted(h, `{"jsonrpc":"2.0","id":`+ping.ID.String()+`,`+answer+`}`)
		e := p.event(kind(EventPingAnswered))
		_, resp := s.rest()
		if resp == nil {
			t.Fatal("no response after the ping")
		}
		if strings.HasPrefix(answer, `"result"`) {
			if e.Outcome != OutcomeResult || string(e.ID) != ping.ID.String() || string(e.RequestID) != "2" {
				t.Errorf("ping-answered %+v", e)
			}
			if out := decodeTool(t, resp); string(out.StructuredContent) != `{"x":1}` {
				t.Errorf("echo after ping %+v", out)
			}
		} else {
			if e.Outcome != OutcomeError || e.Code != -32601 {
				t.Errorf("ping-answered %+v", e)
			}
			if e := rpcError(t, resp); e.Code != jsonrpc.CodeInternalError {
				t.Errorf("tools/call after a failed ping: %v", e)
			}
		}
	}
	// No ping for a 2026 request: it has no way to answer.
	out := decodeTool(t, p.jsonAnswer(modernHeaders("tools/call", "echo"), modernCall("3", "echo", `{}`, ""), 200))
	if out.ResultType != "complete" {
		t.Errorf("modern echo with -ping-client %+v", out)
	}
}

func TestHTTPGetStream(t *testing.T) {
	p := startHTTP(t, &Options{KeepAlive: 20 * time.Millisecond})
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	resp, err := p.request(context.Background(), http.MethodGet, h, "")
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %v %v", resp, err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 256)
	for !strings.Contains(string(buf), ": keep-alive\n\n: keep-alive\n\n") {
		b := make([]byte, 64)
		n, err := resp.Body.Read(b)
		if err != nil {
			t.Fatalf("reading the GET stream %q: %v", buf, err)
		}
		buf = append(buf, b[:n]...)
	}
	if !strings.HasPrefix(string(buf), ": stream open\n\n") {
		t.Errorf("GET stream %q", buf)
	}
	if e := p.event(kind(EventGetStream)); e.Session != sid {
		t.Errorf("get-stream %+v", e)
	}
	if code, _ := p.status(http.MethodGet, h, ""); code != http.StatusConflict {
		t.Errorf("a second GET: %d, want 409", code)
	}
	// DELETE ends it.
	p.status(http.MethodDelete, h, "")
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("GET stream after DELETE: %v", err)
	}

	q := startHTTP(t, &Options{NoGet: true})
	if code, _ := q.status(http.MethodGet, headers{"Mcp-Session-Id": q.initialize("2025-11-25")}, ""); code != 405 {
		t.Errorf("-no-get: %d, want 405", code)
	}
}
