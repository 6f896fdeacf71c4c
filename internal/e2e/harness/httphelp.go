package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/hosttoken"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sse"
)

// Helpers of the HTTP host tests: mcpx serving MCP over Streamable HTTP,
// in this process (daemon.ServeHTTP on a loopback listener, what
// `mcpx serve --http` runs) or as `mcpx serve --http` spawned; and a raw
// HTTP host.

// HTTPMCPX is one mcpx serving HTTP hosts.
type HTTPMCPX struct {
	URL    string
	Token  string // "" with --token none
	LogBuf *SyncBuffer
}

// Logs returns what mcpx logged so far.
func (m *HTTPMCPX) Logs() string { return m.LogBuf.String() }

// StartHTTP starts mcpx serving HTTP with the config at cfgPath, in mode,
// requiring the installation's token unless noToken. It stops at cleanup.
func StartHTTP(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, cfgPath string, noToken bool) *HTTPMCPX {
	t.Helper()
	m := &HTTPMCPX{LogBuf: &SyncBuffer{}}
	if !noToken {
		tok, err := config.Token(e.Vars["XDG_STATE_HOME"] + "/mcpx/token")
		if err != nil {
			t.Fatal(err)
		}
		m.Token = tok
	}
	switch mode {
	case mcpxtest.InProcess:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		m.URL = "http://" + ln.Addr().String() + "/mcp"
		log := slog.New(slog.NewTextHandler(io.MultiWriter(m.LogBuf, mcpxtest.LogWriter(t)), &slog.HandlerOptions{Level: slog.LevelInfo}))
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		var tokens *hosttoken.HostTokens
		if !noToken {
			tokens = hosttoken.NewHostTokens(m.Token, e.Vars["XDG_STATE_HOME"]+"/mcpx/tokens", nil)
		}
		go func() {
			// The job store of the env's other in-process gateways: as
			// every mcpx of a user shares one.
			files := mcpxtest.InProcessFiles(e)
			served <- daemon.ServeHTTP(ctx, &daemon.Options{Config: e.LoadConfig(cfgPath), Version: "test", Logger: log, Files: files}, ln, tokens)
		}()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("ServeHTTP returned %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("ServeHTTP did not return within 20s of its context ending")
			}
		})
	case mcpxtest.Daemon:
		var extra []string
		if noToken {
			extra = []string{"--token", "none"}
		}
		c := StartServeHTTP(t, e, cfgPath, func(line string) { t.Log(line) }, extra...)
		m.URL, m.LogBuf = c.URL, c.Logs
		t.Cleanup(func() {
			if err := c.stop(t); err != nil {
				t.Errorf("mcpx serve --http exited with %v after SIGTERM", err)
			}
		})
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	return m
}

// TlogWriter writes to the test log.
type TlogWriter struct{ t testing.TB }

func (w TlogWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// SyncBuffer is a bytes.Buffer safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitLog waits until mcpx has logged a line containing every one of parts.
func (m *HTTPMCPX) WaitLog(t *testing.T, timeout time.Duration, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for line := range strings.Lines(m.Logs()) {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcpx logged no line with %q within %s; log:\n%s", parts, timeout, m.Logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RawHost is an HTTP host writing exactly what a test says.
type RawHost struct {
	t   *testing.T
	M   *HTTPMCPX
	Hc  *http.Client
	Sid string // legacy session
}

func NewRawHost(t *testing.T, m *HTTPMCPX) *RawHost {
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	t.Cleanup(tr.CloseIdleConnections)
	return &RawHost{t: t, M: m, Hc: &http.Client{Transport: tr}}
}

// Post sends body with the token (if any), the usual MCP headers, and hdr
// (a value of "" removes a header), and returns the response, unread.
func (h *RawHost) Post(ctx context.Context, body string, hdr map[string]string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.M.URL, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.M.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.M.Token)
	}
	if h.Sid != "" {
		req.Header.Set("Mcp-Session-Id", h.Sid)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.Hc.Do(req)
	if err != nil {
		h.t.Fatalf("POST %s: %v", body, err)
	}
	return resp
}

// HttpReply is a whole response: its status, headers and messages (one
// JSON body, or every SSE event).
type HttpReply struct {
	Status int
	Header http.Header
	Body   string
	Msgs   []*jsonrpc.Message
}

// Read reads resp to its end.
func (h *RawHost) Read(resp *http.Response) *HttpReply {
	h.t.Helper()
	defer resp.Body.Close()
	r := &HttpReply{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rd := sse.NewReader(resp.Body, 64<<20)
		var b strings.Builder
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			b.Write(ev.Data)
			b.WriteByte('\n')
			r.Msgs = append(r.Msgs, DecodeMsg(h.t, ev.Data))
		}
		r.Body = b.String()
		return r
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("reading the response: %v", err)
	}
	r.Body = string(b)
	if len(bytes.TrimSpace(b)) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		r.Msgs = append(r.Msgs, DecodeMsg(h.t, b))
	}
	return r
}

func DecodeMsg(t *testing.T, b []byte) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Decode(b)
	if err != nil {
		t.Fatalf("mcpx sent a malformed message %q: %v", b, err)
	}
	return m
}

// Do posts and reads the whole response, within waitLong.
func (h *RawHost) Do(body string, hdr map[string]string) *HttpReply {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLong)
	defer cancel()
	return h.Read(h.Post(ctx, body, hdr))
}

// EndSession ends the host's legacy session with DELETE, as the host's
// token, and fails the test unless mcpx answers 2xx.
func (h *RawHost) EndSession() {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, h.M.URL, nil)
	if h.M.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.M.Token)
	}
	req.Header.Set("Mcp-Session-Id", h.Sid)
	resp, err := h.Hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		h.t.Fatalf("DELETE: %d", resp.StatusCode)
	}
}

// Initialize starts a legacy session at version.
func (h *RawHost) Initialize(version string) {
	h.t.Helper()
	r := h.Do(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version), nil)
	if r.Status != http.StatusOK || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
		h.t.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
	h.Sid = r.Header.Get("Mcp-Session-Id")
	if h.Sid == "" {
		h.t.Fatalf("initialize: no Mcp-Session-Id in %v", r.Header)
	}
	if r := h.Do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Protocol-Version": version}); r.Status != http.StatusAccepted {
		h.t.Fatalf("notifications/initialized: %d %s, want 202", r.Status, r.Body)
	}
}

// ModernMeta is the _meta of a 2026-07-28 request with extra keys.
func ModernMeta(extra map[string]any) map[string]any { return mcpxtest.ModernMeta(extra) }

// ModernHeaders are the headers of a 2026-07-28 request for method and
// (tools/call) name.
func ModernHeaders(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// CallBody is a tools/call request body.
func CallBody(id any, tool string, args any, meta map[string]any) string {
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}
