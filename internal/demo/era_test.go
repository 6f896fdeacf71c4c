package demo

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

func initReq(id, version string) string {
	return req(id, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"0"}}`)
}

func TestInitializeNegotiates(t *testing.T) {
	tests := []struct {
		requested, max, want string
	}{
		{"2025-11-25", "", "2025-11-25"},
		{"2025-06-18", "", "2025-06-18"},
		{"2024-11-05", "", "2024-11-05"},
		{"1999-01-01", "", "2025-11-25"},
		{"2026-07-28", "", "2025-11-25"},
		{"2025-11-25", "2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-06-18", "2025-03-26"},
		{"2025-06-18", "2024-11-05", "2024-11-05"},
	}
	for _, tt := range tests {
		t.Run(tt.requested+"/"+tt.max, func(t *testing.T) {
			p := startPeer(t, &Options{MaxVersion: tt.max})
			var got mcp.InitializeResult
			if err := json.Unmarshal(result(t, p.call("1", initReq("1", tt.requested))), &got); err != nil {
				t.Fatal(err)
			}
			want := mcp.InitializeResult{
				ProtocolVersion: tt.want,
				Capabilities:    json.RawMessage(`{"tools":{"listChanged":false}}`),
				ServerInfo:      mcp.Implementation{Name: "mcpx-demo", Version: "1.0.0"},
				Instructions:    instructions,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("initialize result (-want +got):\n%s", diff)
			}
			e := p.event(func(e Event) bool { return e.Event == EventInitialize })
			if e.Requested != tt.requested || e.ProtocolVersion != tt.want {
				t.Errorf("initialize event = %+v", e)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if got := string(result(t, p.call("2", req("2", "ping", `{}`)))); got != `{}` {
				t.Errorf("ping = %s, want {}", got)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	discover := req(`"d"`, "server/discover", `{"_meta":`+modernMeta("")+`}`)
	info := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpx-demo","version":"1.0.0"}}`
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"auto", Options{}, `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}},` + info},
		{"max", Options{MaxVersion: "2025-03-26"}, `{"resultType":"complete","supportedVersions":["2026-07-28","2025-03-26","2024-11-05"],"capabilities":{"tools":{}},` + info},
		{"modern", Options{Era: EraModern}, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},` + info},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPeer(t, &tt.opts)
			got := string(result(t, p.call(`"d"`, discover)))
			want := tt.want + `,"instructions":` + string(marshal(instructions)) + `}`
			if got != want {
				t.Errorf("discover =\n%s\nwant\n%s", got, want)
			}
		})
	}
	t.Run("legacy", func(t *testing.T) {
		p := startPeer(t, &Options{Era: EraLegacy})
		if e := rpcError(t, p.call(`"d"`, discover)); e.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("discover in the legacy era: %v, want -32601", e)
		}
	})
	t.Run("ignore", func(t *testing.T) {
		p := startPeer(t, &Options{IgnoreDiscover: true})
		p.send(discover)
		if e := p.event(finished(`"d"`)); e.Outcome != OutcomeIgnored {
			t.Errorf("discover outcome %q, want ignored", e.Outcome)
		}
		result(t, p.call("2", initReq("2", "2025-11-25"))) // the next response is initialize's
	})
}

func TestModernRequests(t *testing.T) {
	p := startPeer(t, nil)
	list := string(result(t, p.call("1", req("1", "tools/list", `{"_meta":`+modernMeta("")+`}`))))
	if !strings.HasSuffix(list, `,"resultType":"complete"}`) {
		t.Errorf("modern tools/list lacks resultType: ...%s", list[max(0, len(list)-60):])
	}
	bad := func(id, meta string, code int64) *jsonrpc.Error {
		t.Helper()
		e := rpcError(t, p.call(id, req(id, "tools/list", `{"_meta":`+meta+`}`)))
		if e.Code != code {
			t.Errorf("request %s: error %v, want code %d", id, e, code)
		}
		return e
	}
	e := bad("2", `{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}`, mcp.CodeUnsupportedProtocolVersion)
	if want := `{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"1900-01-01"}`; string(e.Data) != want {
		t.Errorf("-32022 data = %s, want %s", e.Data, want)
	}
	bad("3", `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`, mcp.CodeUnsupportedProtocolVersion)
	bad("4", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, jsonrpc.CodeInvalidParams)
	bad("5", `{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}`, jsonrpc.CodeInvalidParams)
	if e := rpcError(t, p.call("6", req("6", "ping", `{"_meta":`+modernMeta("")+`}`))); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("modern ping: %v, want -32601", e)
	}
	// Legacy requests on the same connection stay legacy.
	if got := string(result(t, p.call("7", req("7", "ping", `{}`)))); got != `{}` {
		t.Errorf("legacy ping = %s", got)
	}
}

func TestEras(t *testing.T) {
	t.Run("legacy ignores modern _meta", func(t *testing.T) {
		p := startPeer(t, &Options{Era: EraLegacy})
		meta := `{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}`
		out := decodeTool(t, p.call("1", callReq("1", "sleep_then", `{"seconds":0}`, meta)))
		if out.ResultType != "" || out.text() != "done" {
			t.Errorf("legacy era result %+v", out)
		}
	})
	t.Run("modern refuses initialize", func(t *testing.T) {
		p := startPeer(t, &Options{Era: EraModern})
		e := rpcError(t, p.call("1", initReq("1", "2025-11-25")))
		if e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "2026-07-28") {
			t.Errorf("initialize in the modern era: %v", e)
		}
		if want := `{"supported":["2026-07-28"],"requested":"2025-11-25"}`; string(e.Data) != want {
			t.Errorf("data = %s, want %s", e.Data, want)
		}
		if e := rpcError(t, p.call("2", req("2", "tools/list", `{}`))); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("tools/list without _meta in the modern era: %v, want -32602", e)
		}
		out := decodeTool(t, p.call("3", callReq("3", "sleep_then", `{"seconds":0,"text":"hi"}`, modernMeta(""))))
		if out.ResultType != "complete" || out.text() != "hi" {
			t.Errorf("modern call = %+v", out)
		}
	})
}

func TestInitDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	p := startPeer(t, &Options{InitDelay: delay})
	start := time.Now()
	p.send(initReq("1", "2025-06-18"))
	p.send(cancelNote("1", "impatient"))
	e := p.event(func(e Event) bool { return e.Event == EventCancelled })
	if !*e.Known || e.Method != "initialize" || e.Reason != "impatient" {
		t.Errorf("cancel of initialize recorded as %+v", e)
	}
	_, m := p.until("1")
	if result(t, m); time.Since(start) < delay {
		t.Errorf("initialize answered after %v, before the delay %v", time.Since(start), delay)
	}
	// server/discover waits too, but may be cancelled.
	p.send(req("2", "server/discover", `{}`))
	p.send(cancelNote("2", "too slow"))
	if e := p.event(finished("2")); e.Outcome != OutcomeCancelled {
		t.Errorf("cancelled discover: outcome %q", e.Outcome)
	}
	result(t, p.call("3", req("3", "ping", `{}`)))
}
