package demo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

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
