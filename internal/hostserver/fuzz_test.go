package hostserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mcpx/internal/catalog"
	"mcpx/internal/config"
	"mcpx/internal/hosthttp"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// newFuzzHTTP returns an HTTP face with no upstreams.
func newFuzzHTTP() (*hosthttp.Server, func()) {
	cfg := &config.Config{Servers: map[string]*config.Server{}}
	pool := upstream.NewPool(cfg, nil)
	srv := New(relay.New(cfg, pool, relay.NewRegistry(), nil), catalog.New(pool, catalog.Naming{Separator: "__"}, nil), nil)
	face := srv.HTTP(nil)
	return face, face.Close
}

// post sends one POST to h and returns the recorded response.
func post(h http.Handler, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond) // subscriptions/listen stays open
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:7777/mcp", bytes.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// FuzzHTTPPost: whatever a host POSTs (body, Content-Type, Accept, the
// protocol version, method and name headers, in a legacy session or
// none), mcpx classifies it without panicking and answers with a status
// it documents; every refusal is a JSON-RPC error, and every JSON answer
// a response to the request's own id.
func FuzzHTTPPost(f *testing.F) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`
	modern := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x__y","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, s := range []struct {
		body, ctype, accept, version, method, name string
		session                                    bool
	}{
		{init, "application/json", "application/json, text/event-stream", "", "", "", false},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "application/json", "application/json", "2025-11-25", "", "", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/json", "", "", "", "", true},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, "application/json; charset=utf-8", "*/*", "", "", "", true},
		{modern, "application/json", "text/event-stream", "2026-07-28", "tools/call", "x__y", false},
		{modern, "application/json", "application/json", "2026-07-28", "tools/call", "=?base64?eF9feQ==?=", false},
		{modern, "application/json", "application/json", "2026-07-28", "tools/list", "=?base64?!!?=", false},
		{strings.Replace(modern, "tools/call", "subscriptions/listen", 1), "application/json", "text/event-stream", "2026-07-28", "subscriptions/listen", "", false},
		{strings.Replace(modern, "tools/call", "server/discover", 1), "application/json", "", "2026-07-28", "server/discover", "", false},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "application/json", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "application/json", "", "1999-01-01", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "application/json", "", "", "", "", false},
		{`{`, "text/plain", "text/html", "", "", "", false},
	} {
		f.Add([]byte(s.body), s.ctype, s.accept, s.version, s.method, s.name, s.session)
	}
	f.Fuzz(func(t *testing.T, body []byte, ctype, acceptHdr, version, method, name string, session bool) {
		face, stop := newFuzzHTTP()
		defer stop()
		h := face.Handler(hosthttp.Access{})
		hdr := map[string]string{"Content-Type": ctype, "Accept": acceptHdr, hosthttp.HeaderProtocolVersion: version, hosthttp.HeaderMethod: method, hosthttp.HeaderName: name}
		for k, v := range hdr {
			if v == "" || strings.ContainsAny(v, "\r\n\x00") {
				delete(hdr, k) // not a header a client can send
			}
		}
		if session {
			w := post(h, []byte(init), map[string]string{"Content-Type": "application/json"})
			if w.Code != http.StatusOK || w.Header().Get(hosthttp.HeaderSessionID) == "" {
				t.Fatalf("initialize: %d %s", w.Code, w.Body)
			}
			hdr[hosthttp.HeaderSessionID] = w.Header().Get(hosthttp.HeaderSessionID)
		}
		w := post(h, body, hdr)
		switch w.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusNotFound,
			http.StatusNotAcceptable, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q with %v: %s", w.Code, body, hdr, w.Body)
		}
		ct := w.Header().Get("Content-Type")
		switch {
		case w.Code == http.StatusAccepted:
			if w.Body.Len() != 0 {
				t.Fatalf("202 with a body: %s", w.Body)
			}
		case w.Code >= 400:
			m, err := jsonrpc.Decode(w.Body.Bytes())
			if err != nil || m.Error == nil || ct != "application/json" {
				t.Fatalf("refusal %d is not a JSON-RPC error (%s, %v): %s", w.Code, ct, err, w.Body)
			}
		case ct == "application/json":
			m, err := jsonrpc.Decode(w.Body.Bytes())
			if err != nil || !m.IsResponse() {
				t.Fatalf("200 JSON is not a response (%v): %s", err, w.Body)
			}
			req, err := jsonrpc.Decode(body)
			if err != nil || m.ID != req.ID {
				t.Fatalf("response id %s for request %q", m.ID, body)
			}
		case strings.HasPrefix(ct, "text/event-stream"):
		default:
			t.Fatalf("200 with Content-Type %q: %s", ct, w.Body)
		}
	})
}
