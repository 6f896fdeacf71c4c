package demo

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

func TestHTTPLegacy(t *testing.T) {
	p := startHTTP(t, nil)
	resp := p.post(nil, initReq("1", "2025-11-25"))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || sid == "" {
		t.Fatalf("initialize: %s %q session %q: %s", resp.Status, resp.Header.Get("Content-Type"), sid, b)
	}
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q is not visible ASCII", sid)
		}
	}
	var init mcp.InitializeResult
	im, err := jsonrpc.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(result(t, im), &init); err != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result %s (%v)", b, err)
	}
	if e := p.event(kind(EventSessionStart)); e.Session != sid {
		t.Errorf("session-start %+v", e)
	}
	if e := p.event(kind(EventInitialize)); e.Session != sid || e.ProtocolVersion != "2025-11-25" {
		t.Errorf("initialize event %+v", e)
	}
	h := headers{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	p.accepted(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// JSON answers without a progress token.
	if got := string(result(t, p.jsonAnswer(h, req("2", "ping", `{}`), 200))); got != `{}` {
		t.Errorf("ping = %s", got)
	}
	var list struct{ Tools []mcp.Tool }
	json.Unmarshal(result(t, p.jsonAnswer(h, req("3", "tools/list", `{}`), 200)), &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if want := append(toolNames(), "region_echo", "bad_header_tool"); !slices.Equal(names, want) {
		t.Errorf("tools over HTTP %v, want %v", names, want)
	}
	if out := decodeTool(t, p.jsonAnswer(h, callReq("4", "echo", `{"n":12345678901234567890}`, ""), 200)); string(out.StructuredContent) != `{"n":12345678901234567890}` || out.ResultType != "" {
		t.Errorf("echo %+v", out)
	}
	// server/discover is not a legacy method, even with modern _meta.
	if e := rpcError(t, p.jsonAnswer(h, modernReq("5", "server/discover", ""), 200)); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("discover in a session: %v", e)
	}
	if e := p.event(func(e Event) bool { return e.Event == EventRequest && e.Tool == "echo" }); e.Session != sid || e.Headers["MCP-Protocol-Version"] != "2025-11-25" {
		t.Errorf("request event %+v", e)
	}

	// SSE with a progress token: a priming event, then progress and the
	// response, each with an id.
	s := p.openSSE(context.Background(), h, callReq("6", "export", `{"seconds":0.05,"steps":3}`, `{"progressToken":"p6"}`))
	var ids []string
	var notes []*jsonrpc.Message
	var last *jsonrpc.Message
	for {
		m, ev := s.next()
		if m == nil {
			break
		}
		ids = append(ids, ev.ID)
		if m.IsResponse() {
			last = m
		} else {
			notes = append(notes, m)
		}
	}
	if got := progressValues(t, notes); !slices.Equal(got, seq(1, 3)) || last == nil || string(last.ID.Raw()) != "6" {
		t.Fatalf("export over SSE: progress %v, response %v", got, last)
	}
	if !slices.Equal(ids, []string{"1-1", "1-2", "1-3", "1-4"}) {
		t.Errorf("event ids %v", ids)
	}
	if out := decodeTool(t, last); out.text() != "exported 1000 records in 3 parts" {
		t.Errorf("export result %+v", out)
	}
}

func TestHTTPLegacyPriming(t *testing.T) {
	p := startHTTP(t, nil)
	for _, v := range []string{"2025-11-25", "2025-03-26"} {
		sid := p.initialize(v)
		resp := p.post(headers{"Mcp-Session-Id": sid}, callReq("2", "burst", `{"count":1}`, `{"progressToken":1}`))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		primed := strings.HasPrefix(string(b), "id: 1-0\ndata: \n\n")
		if primed != (v == "2025-11-25") {
			t.Errorf("%s: primed %v:\n%s", v, primed, b)
		}
	}
}

func TestHTTPModern(t *testing.T) {
	p := startHTTP(t, nil)
	m := p.jsonAnswer(modernHeaders("server/discover", ""), modernReq("1", "server/discover", ""), 200)
	var d mcp.DiscoverResult
	if err := json.Unmarshal(result(t, m), &d); err != nil || d.ResultType != "complete" || d.SupportedVersions[0] != "2026-07-28" {
		t.Errorf("discover %s (%v)", m.Result, err)
	}
	list := string(result(t, p.jsonAnswer(modernHeaders("tools/list", ""), modernReq("2", "tools/list", ""), 200)))
	if !strings.Contains(list, `"x-mcp-header":"Region"`) || !strings.HasSuffix(list, `"resultType":"complete"}`) {
		t.Errorf("tools/list %s", list)
	}
	out := decodeTool(t, p.jsonAnswer(modernHeaders("tools/call", "echo"), modernCall("3", "echo", `{"a":1}`, ""), 200))
	if string(out.StructuredContent) != `{"a":1}` || out.ResultType != "complete" {
		t.Errorf("echo %+v", out)
	}
	e := p.event(func(e Event) bool { return e.Event == EventRequest && e.Tool == "echo" })
	if diff := cmp.Diff(map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}, e.Headers); diff != "" || e.Session != "" {
		t.Errorf("request event headers (-want +got):\n%s", diff)
	}
	// SSE when progress was asked: no event ids (no resumption in 2026).
	s := p.openSSE(context.Background(), modernHeaders("tools/call", "burst"), modernCall("4", "burst", `{"count":5}`, `,"progressToken":"b"`))
	var notes []*jsonrpc.Message
	for {
		m, ev := s.next()
		if m == nil {
			t.Fatal("no response on the stream")
		}
		if ev.ID != "" {
			t.Errorf("2026 event with an id %q", ev.ID)
		}
		if m.IsResponse() {
			if out := decodeTool(t, m); out.text() != "sent 5" || out.ResultType != "complete" {
				t.Errorf("burst %+v", out)
			}
			break
		}
		notes = append(notes, m)
	}
	if got := progressValues(t, notes); !slices.Equal(got, seq(1, 5)) {
		t.Errorf("progress %v", got)
	}
	if s.resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("no X-Accel-Buffering: no on an SSE answer")
	}
	// A POSTed notification is accepted and ignored; ping is legacy only.
	p.accepted(headers{"MCP-Protocol-Version": "2026-07-28"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, e := p.status(http.MethodPost, modernHeaders("ping", ""), modernReq("5", "ping", "")); code != 404 || e == nil || e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("modern ping: %d %v, want 404 -32601", code, e)
	}
}

func TestHTTPSessions(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-06-18")
	h := headers{"Mcp-Session-Id": sid}
	tests := []struct {
		name   string
		method string
		h      headers
		body   string
		status int
	}{
		{"no session", "POST", nil, req("2", "tools/list", `{}`), 400},
		{"unknown session", "POST", headers{"Mcp-Session-Id": "nope"}, req("2", "tools/list", `{}`), 404},
		{"initialize in a session", "POST", h, initReq("2", "2025-06-18"), 400},
		{"unsupported version header", "POST", h.with(headers{"MCP-Protocol-Version": "1999-01-01"}), req("2", "ping", `{}`), 400},
		{"not the negotiated version", "POST", h.with(headers{"MCP-Protocol-Version": "2025-03-26"}), req("2", "ping", `{}`), 400},
		{"notification without a session", "POST", nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 400},
		{"GET without a session", "GET", nil, "", 400},
		{"GET unknown session", "GET", headers{"Mcp-Session-Id": "nope"}, "", 404},
		{"DELETE without a session", "DELETE", nil, "", 400},
		{"DELETE unknown session", "DELETE", headers{"Mcp-Session-Id": "nope"}, "", 404},
	}
	for _, tt := range tests {
		if code, _ := p.status(tt.method, tt.h, tt.body); code != tt.status {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.status)
		}
		e := p.event(kind(EventRejected))
		if e.Status != tt.status {
			t.Errorf("%s: rejection recorded as %+v", tt.name, e)
		}
	}
	// Without the version header: assumed, accepted.
	p.jsonAnswer(h, req("3", "ping", `{}`), 200)
	if code, _ := p.status(http.MethodDelete, h, ""); code != 200 {
		t.Fatalf("DELETE: %d", code)
	}
	if e := p.event(kind(EventSessionEnd)); e.Session != sid || e.Reason != ReasonSessionDeleted {
		t.Errorf("session-end %+v", e)
	}
	if code, _ := p.status(http.MethodPost, h, req("4", "ping", `{}`)); code != 404 {
		t.Errorf("after DELETE: %d, want 404", code)
	}
	if code, _ := p.status(http.MethodDelete, h, ""); code != 404 {
		t.Errorf("DELETE again: %d, want 404", code)
	}
	// A new session works.
	p.jsonAnswer(headers{"Mcp-Session-Id": p.initialize("2025-06-18")}, req("5", "ping", `{}`), 200)
}

func TestHTTPDeleteCancels(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	s := p.openSSE(context.Background(), h, callReq("7", "export", `{"seconds":30,"steps":100}`, `{"progressToken":"x"}`))
	if m, _ := s.next(); m == nil || m.Method != "notifications/progress" {
		t.Fatalf("first event %v", m)
	}
	jsonDone := make(chan error, 1)
	go func() {
		resp, err := p.request(context.Background(), http.MethodPost, h, callReq("8", "wait", `{"seconds":30}`, ""))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		jsonDone <- err
	}()
	p.event(func(e Event) bool { return e.Event == EventRequest && string(e.ID) == "8" })
	if code, _ := p.status(http.MethodDelete, h, ""); code != 200 {
		t.Fatalf("DELETE: %d", code)
	}
	for _, id := range []string{"7", "8"} {
		e := p.event(func(e Event) bool { return e.Event == EventCancelled && string(e.RequestID) == id })
		if e.Reason != ReasonSessionDeleted || !*e.Known || e.Session != sid {
			t.Errorf("cancellation of %s: %+v", id, e)
		}
		if e := p.event(finished(id)); e.Outcome != OutcomeCancelled {
			t.Errorf("%s finished %+v", id, e)
		}
	}
	if _, resp := s.rest(); resp != nil {
		t.Errorf("a response after DELETE: %s", resp.Encode())
	}
	if err := <-jsonDone; err == nil {
		t.Error("the JSON answer of a cancelled request was not aborted")
	}
}

func TestHTTPResume(t *testing.T) {
	p := startHTTP(t, &Options{SSECloseAfter: 3})
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	s := p.openSSE(context.Background(), h, callReq("2", "export", `{"seconds":0.1,"steps":10}`, `{"progressToken":"r"}`))
	var notes []*jsonrpc.Message
	var resp *jsonrpc.Message
	var gets int
	for resp == nil {
		for {
			m, _ := s.next()
			if m == nil {
				break
			}
			if m.IsResponse() {
				resp = m
				break
			}
			notes = append(notes, m)
		}
		if resp != nil {
			break
		}
		last := s.rd.LastEventID()
		if last == "" {
			t.Fatal("the stream ended without an event id")
		}
		if raw := s.raw.String(); !strings.HasSuffix(raw, "id: "+last+"\nretry: 100\ndata: \n\n") {
			t.Errorf("the stream ended without a retry:\n%s", raw)
		}
		if gets++; gets > 10 {
			t.Fatal("too many resumptions")
		}
		s.close()
		s = p.resume(sid, last)
	}
	if got := progressValues(t, notes); !slices.Equal(got, seq(1, 10)) {
		t.Errorf("progress across resumptions %v", got)
	}
	if gets != 3 || string(resp.ID.Raw()) != "2" {
		t.Errorf("%d resumptions (want 3), response %s", gets, resp.Encode())
	}
	if e := p.event(kind(EventStreamClosed)); e.LastEventID != "1-3" || e.Session != sid {
		t.Errorf("sse-closed %+v", e)
	}
	if e := p.event(kind(EventResumed)); e.LastEventID != "1-3" || string(e.ID) != "2" {
		t.Errorf("resumed %+v", e)
	}
	// A finished stream can be replayed from any buffered id.
	s = p.resume(sid, "1-9")
	if notes, resp := s.rest(); len(notes) != 1 || resp == nil {
		t.Errorf("replay after 1-9: %d notes, response %v", len(notes), resp)
	}
	for _, bad := range []string{"9-1", "1-99", "x"} {
		if code, _ := p.status(http.MethodGet, headers{"Mcp-Session-Id": sid, "Last-Event-ID": bad}, ""); code != 400 {
			t.Errorf("Last-Event-ID %s: %d, want 400", bad, code)
		}
	}
}

func TestHTTPLegacyDisconnectIsNotCancel(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	ctx, cancel := context.WithCancel(context.Background())
	s := p.openSSE(ctx, h, callReq("2", "export", `{"seconds":0.4,"steps":4}`, `{"progressToken":"d"}`))
	if m, _ := s.next(); m == nil || m.IsResponse() {
		t.Fatalf("first event %v", m)
	}
	last := s.rd.LastEventID()
	cancel()
	if e := p.event(finished("2")); e.Outcome != OutcomeResult {
		t.Errorf("a disconnected legacy request: %+v", e)
	}
	notes, resp := p.resume(sid, last).rest()
	if got := progressValues(t, notes); !slices.Equal(got, seq(2, 4)) || resp == nil {
		t.Errorf("replayed progress %v, response %v", got, resp)
	}
	if len(recordedCancellations(p)) != 0 {
		t.Error("a disconnect was recorded as a cancellation")
	}
}

// recordedCancellations returns the cancellations recorded so far.
func recordedCancellations(p *hpeer) []Event {
	for {
		select {
		case e := <-p.events:
			p.seen = append(p.seen, e)
			continue
		default:
		}
		break
	}
	var out []Event
	for _, e := range p.seen {
		if e.Event == EventCancelled {
			out = append(out, e)
		}
	}
	return out
}

func TestHTTPCancelByNotification(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	s := p.openSSE(context.Background(), h, callReq(`"c1"`, "export", `{"seconds":30,"steps":100}`, `{"progressToken":"c"}`))
	if m, _ := s.next(); m == nil || m.IsResponse() {
		t.Fatalf("first event %v", m)
	}
	p.accepted(h, cancelNote(`"c1"`, "user gave up"))
	e := p.event(kind(EventCancelled))
	if string(e.RequestID) != `"c1"` || e.Reason != "user gave up" || !*e.Known || e.Tool != "export" || e.Session != sid {
		t.Errorf("cancellation %+v", e)
	}
	if e := p.event(finished(`"c1"`)); e.Outcome != OutcomeCancelled {
		t.Errorf("finished %+v", e)
	}
	if _, resp := s.rest(); resp != nil {
		t.Errorf("response after cancel: %s", resp.Encode())
	}
	// The cancellations tool sees it too.
	out := decodeTool(t, p.jsonAnswer(h, callReq("3", "cancellations", `{}`, ""), 200))
	if !strings.Contains(out.text(), `"reason":"user gave up"`) {
		t.Errorf("cancellations %s", out.text())
	}
}

func TestHTTPCancelByStreamClose(t *testing.T) {
	p := startHTTP(t, nil)
	t.Run("sse", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := p.openSSE(ctx, modernHeaders("tools/call", "export"), modernCall("1", "export", `{"seconds":30,"steps":100}`, `,"progressToken":"s"`))
		if m, _ := s.next(); m == nil || m.IsResponse() {
			t.Fatalf("first event %v", m)
		}
		cancel()
		e := p.event(kind(EventCancelled))
		if string(e.RequestID) != "1" || e.Reason != ReasonStreamClosed || !*e.Known || e.Tool != "export" {
			t.Errorf("cancellation %+v", e)
		}
		if e := p.event(finished("1")); e.Outcome != OutcomeCancelled {
			t.Errorf("finished %+v", e)
		}
	})
	t.Run("json", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			resp, err := p.request(ctx, http.MethodPost, modernHeaders("tools/call", "wait"), modernCall("1", "wait", `{"seconds":30}`, ""))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		p.event(func(e Event) bool { return e.Event == EventRequest && e.Tool == "wait" })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("request: %v", err)
		}
		if e := p.event(kind(EventCancelled)); e.Reason != ReasonStreamClosed || !*e.Known || e.Tool != "wait" {
			t.Errorf("cancellation %+v", e)
		}
		if e := p.event(finished("1")); e.Outcome != OutcomeCancelled {
			t.Errorf("finished %+v", e)
		}
	})
}

func TestHTTPCancelledNotificationOverHTTP(t *testing.T) {
	p := startHTTP(t, nil)
	p.accepted(headers{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/cancelled"}, cancelNote("1", "should not be sent"))
	e := p.event(kind(EventCancelledHTTP))
	if string(e.RequestID) != "1" || e.Reason != "should not be sent" || e.Headers["Mcp-Method"] != "notifications/cancelled" {
		t.Errorf("event %+v", e)
	}
	// Without a 2026 header it is not accepted, but recorded all the same.
	if code, _ := p.status(http.MethodPost, nil, cancelNote("2", "bare")); code != 400 {
		t.Errorf("a bare cancel: %d, want 400", code)
	}
	if e := p.event(kind(EventCancelledHTTP)); string(e.RequestID) != "2" {
		t.Errorf("event %+v", e)
	}
	if len(recordedCancellations(p)) != 0 {
		t.Error("recorded as a cancellation")
	}
}

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

func TestHTTPEras(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		p := startHTTP(t, &Options{Era: EraLegacy})
		// A 2026 probe gets a legacy 400 (no modern error in its body).
		code, e := p.status(http.MethodPost, modernHeaders("server/discover", ""), modernReq("1", "server/discover", ""))
		if code != 400 || e == nil || e.Code != jsonrpc.CodeInvalidRequest {
			t.Errorf("discover: %d %v", code, e)
		}
		p.jsonAnswer(headers{"Mcp-Session-Id": p.initialize("2025-11-25")}, req("2", "ping", `{}`), 200)
	})
	t.Run("modern", func(t *testing.T) {
		p := startHTTP(t, &Options{Era: EraModern})
		m := p.jsonAnswer(nil, initReq("1", "2025-11-25"), 400)
		if e := rpcError(t, m); e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(e.Data), `"supported":["2026-07-28"]`) {
			t.Errorf("initialize: %v %s", e, e.Data)
		}
		// A session id is ignored.
		p.jsonAnswer(modernHeaders("tools/list", "").with(headers{"Mcp-Session-Id": "x"}), modernReq("2", "tools/list", ""), 200)
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			if code, _ := p.status(method, headers{"Mcp-Session-Id": "x"}, ""); code != 405 {
				t.Errorf("%s: %d, want 405", method, code)
			}
		}
		// A cancel with a session id is still a 2026 one.
		p.accepted(headers{"Mcp-Session-Id": "x"}, cancelNote("1", "r"))
		p.event(kind(EventCancelledHTTP))
	})
}

func TestHTTPBadInput(t *testing.T) {
	p := startHTTP(t, nil)
	send := func(method, path string, h headers, body string) (int, *jsonrpc.Error) {
		req, _ := http.NewRequest(method, strings.TrimSuffix(p.url, "/mcp")+path, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m, err := jsonrpc.Decode(b)
		if err != nil {
			return resp.StatusCode, nil
		}
		return resp.StatusCode, m.Error
	}
	ok := headers{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	tests := []struct {
		name         string
		method, path string
		h            headers
		body         string
		status       int
		code         int64
	}{
		{"content type", "POST", "/mcp", ok.with(headers{"Content-Type": "text/plain"}), req("1", "ping", `{}`), 415, jsonrpc.CodeInvalidRequest},
		{"accept", "POST", "/mcp", ok.with(headers{"Accept": "application/json"}), req("1", "ping", `{}`), 406, jsonrpc.CodeInvalidRequest},
		{"not JSON", "POST", "/mcp", ok, `{nope`, 400, jsonrpc.CodeParseError},
		{"batch", "POST", "/mcp", ok, `[` + initReq("1", "2025-03-26") + `]`, 400, jsonrpc.CodeInvalidRequest},
		{"too big", "POST", "/mcp", ok, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"` + strings.Repeat("a", maxBodyBytes) + `"}}`, 413, jsonrpc.CodeInvalidRequest},
		{"origin", "POST", "/mcp", ok.with(headers{"Origin": "https://evil.example"}), initReq("1", "2025-03-26"), 403, jsonrpc.CodeInvalidRequest},
		{"path", "POST", "/other", ok, initReq("1", "2025-03-26"), 404, jsonrpc.CodeInvalidRequest},
		{"method", "PUT", "/mcp", ok, "", 405, jsonrpc.CodeInvalidRequest},
		{"a response with no session", "POST", "/mcp", ok, `{"jsonrpc":"2.0","id":1,"result":{}}`, 400, jsonrpc.CodeInvalidRequest},
	}
	for _, tt := range tests {
		if code, e := send(tt.method, tt.path, tt.h, tt.body); code != tt.status || e == nil || e.Code != tt.code {
			t.Errorf("%s: %d %v, want %d %d", tt.name, code, e, tt.status, tt.code)
		}
	}
	if code, _ := send("POST", "/mcp", ok.with(headers{"Origin": "http://localhost:3000"}), initReq("1", "2025-03-26")); code != 200 {
		t.Errorf("a localhost Origin: %d", code)
	}
}

func TestHTTPIgnoreDiscover(t *testing.T) {
	p := startHTTP(t, &Options{IgnoreDiscover: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.request(ctx, http.MethodPost, modernHeaders("server/discover", ""), modernReq("1", "server/discover", ""))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ignored discover: %v, want no answer until the client gives up", err)
	}
	if e := p.event(finished("1")); e.Outcome != OutcomeIgnored {
		t.Errorf("finished %+v", e)
	}
}

func TestHTTPStops(t *testing.T) {
	for _, how := range []string{"stdin", "context"} {
		t.Run(how, func(t *testing.T) {
			p := startHTTP(t, nil)
			sid := p.initialize("2025-11-25")
			s := p.openSSE(context.Background(), headers{"Mcp-Session-Id": sid}, callReq("2", "stubborn", `{"seconds":30}`, `{"progressToken":1}`))
			errc := make(chan error, 1)
			go func() {
				resp, err := p.request(context.Background(), http.MethodPost, modernHeaders("tools/call", "wait"), modernCall("3", "wait", `{"seconds":30}`, ""))
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errc <- err
			}()
			p.event(func(e Event) bool { return e.Event == EventRequest && string(e.ID) == "3" })
			start := time.Now()
			if how == "stdin" {
				if err := p.close(); err != nil {
					t.Errorf("ServeHTTP = %v", err)
				}
			} else {
				p.cancel()
				if err := p.close(); err != nil {
					t.Errorf("ServeHTTP = %v", err)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("stopping took %v", d)
			}
			for _, id := range []string{"2", "3"} {
				if e := p.event(finished(id)); e.Outcome != OutcomeShutdown {
					t.Errorf("finished at shutdown %+v", e)
				}
			}
			if e := p.event(kind(EventSessionEnd)); e.Session != sid {
				t.Errorf("session-end %+v", e)
			}
			if _, resp := s.rest(); resp != nil {
				t.Errorf("response at shutdown %s", resp.Encode())
			}
			if err := <-errc; err == nil {
				t.Error("the JSON answer was not aborted at shutdown")
			}
		})
	}
}

func TestHTTPWireLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wire.log")
	p := startHTTP(t, &Options{WireLog: path})
	p.jsonAnswer(modernHeaders("tools/call", "echo"), modernCall("1", "echo", "{\n\"a\": 1}", ""), 200)
	s := p.openSSE(context.Background(), modernHeaders("tools/call", "burst"), modernCall("2", "burst", `{"count":1}`, `,"progressToken":1`))
	s.rest()
	p.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{
		"H POST /mcp\nH Accept: application/json, text/event-stream\nH MCP-Protocol-Version: 2026-07-28\nH Mcp-Method: tools/call\nH Mcp-Name: echo\n",
		`< ` + modernCall("1", "echo", `{"a":1}`, "") + "\n",
		`> {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\n\"a\": 1}"}],"structuredContent":{"a":1},"resultType":"complete"}}` + "\n",
		`> {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":1,"message":"step 1"}}` + "\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("wire log lacks %q:\n%s", want, log)
		}
	}
}

func TestHTTPBadOptions(t *testing.T) {
	if err := ServeHTTP(context.Background(), nil, io.Discard, &Options{SSECloseAfter: -1}); err == nil {
		t.Error("negative -sse-close-after accepted")
	}
	if err := ServeHTTP(context.Background(), nil, io.Discard, &Options{HTTP: "no such host:x"}); err == nil {
		t.Error("a bad address accepted")
	}
}

func TestParseHTTPFlags(t *testing.T) {
	got, err := ParseFlags([]string{"-http", "127.0.0.1:0", "-sse-close-after", "3", "-no-get", "-ping-client", "-keep-alive", "1s", "-era", "legacy"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := &Options{Era: EraLegacy, MaxVersion: "2025-11-25", HTTP: "127.0.0.1:0", SSECloseAfter: 3, NoGet: true, PingClient: true, KeepAlive: time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	for _, args := range [][]string{{"-ping-client"}, {"-sse-close-after", "2"}, {"-no-get"}, {"-http", ":0", "-sse-close-after", "-1"}} {
		if _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("ParseFlags(%q) = nil error", args)
		}
	}
}

// TestHTTPBurst sends more progress than a stream buffers: a live
// connection gets every event, in order, before the response.
func TestHTTPBurst(t *testing.T) {
	p := startHTTP(t, nil)
	const n = 3 * streamEvents
	sid := p.initialize("2025-11-25")
	for _, tt := range []struct {
		h    headers
		body string
	}{
		{headers{"Mcp-Session-Id": sid}, callReq("1", "burst", `{"count":12288}`, `{"progressToken":1}`)},
		{modernHeaders("tools/call", "burst"), modernCall("2", "burst", `{"count":12288}`, `,"progressToken":2`)},
	} {
		notes, resp := p.openSSE(context.Background(), tt.h, tt.body).rest()
		if got := progressValues(t, notes); !slices.Equal(got, seq(1, n)) || resp == nil {
			t.Fatalf("%d progress (want %d in order), response %v", len(got), n, resp)
		}
		if out := decodeTool(t, resp); out.text() != "sent 12288" {
			t.Errorf("burst %+v", out)
		}
	}
}

func TestHTTPDuplicateID(t *testing.T) {
	p := startHTTP(t, nil)
	sid := p.initialize("2025-11-25")
	h := headers{"Mcp-Session-Id": sid}
	s := p.openSSE(context.Background(), h, callReq("5", "wait", `{"seconds":30}`, `{"progressToken":1}`))
	p.event(func(e Event) bool { return e.Event == EventRequest && string(e.ID) == "5" })
	if code, e := p.status(http.MethodPost, h, callReq("5", "echo", `{}`, `{"progressToken":2}`)); code != 400 || e == nil || e.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a duplicate id: %d %v", code, e)
	}
	// Ids are per session: another session may use 5.
	p.jsonAnswer(headers{"Mcp-Session-Id": p.initialize("2025-11-25")}, callReq("5", "echo", `{}`, ""), 200)
	p.accepted(h, cancelNote("5", "done"))
	if _, resp := s.rest(); resp != nil {
		t.Errorf("response after cancel %s", resp.Encode())
	}
}
