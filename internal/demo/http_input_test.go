package demo

import (
	"context"
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
)

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
		return statusOf(resp)
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
