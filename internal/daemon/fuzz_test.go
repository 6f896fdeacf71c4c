package daemon

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
)

// fuzzFace is `mcpx serve --http` as a whole (the listener's bounds, the
// server's timeouts, the face's checks and protocol), with no upstream
// and no token, served for the fuzz process's life.
type fuzzFace struct {
	addr string
	logs *lockedLog
}

// lockedLog is a log's output, safe for concurrent use.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var startFuzzFace = sync.OnceValues(func() (*fuzzFace, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fuzzFace{addr: ln.Addr().String(), logs: &lockedLog{}}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := &Options{Config: &config.Config{Servers: map[string]*config.Server{}}, Version: "fuzz", Logger: log}
	go ServeHTTP(context.Background(), opts, ln, nil) // the fuzz process's life
	return f, nil
})

// FuzzHTTPFace: whatever bytes a client writes to the HTTP face (request
// line, headers, body; several requests or a fraction of one), then ends
// its side: what comes back is HTTP responses, the connection closes
// within a few seconds, and nothing panics. HOSTPORT in an input is the
// face's address (its Host check wants it).
func FuzzHTTPFace(f *testing.F) {
	post := func(headers, body string) string {
		return "POST /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			headers + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`
	modern := `{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, seed := range []string{
		post("", initialize),
		post("Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n", modern),
		post("", initialize) + post("", `{"jsonrpc":"2.0","id":2,"method":"ping"}`), // pipelined
		post("Expect: 100-continue\r\n", initialize),
		"POST /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{",
		"GET /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nAccept: text/event-stream\r\nMcp-Session-Id: nope\r\n\r\n",
		"DELETE /mcp HTTP/1.0\r\nHost: HOSTPORT\r\n\r\n",
		"GET /other HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n[1]",
		"\x00\xff garbage\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: HOSTPORT\r\nBad Header\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		face, err := startFuzzFace()
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.DialTimeout("tcp", face.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dialing the face: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(bytes.ReplaceAll(raw, []byte("HOSTPORT"), []byte(face.addr)))
		_ = c.(*net.TCPConn).CloseWrite()
		reply, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the connection was still open 5s after the client ended its side; read %.200q", reply)
		}
		br := bufio.NewReader(bytes.NewReader(reply))
		for len(reply) > 0 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the face answered what is not HTTP (%v): %.300q", err, reply)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if _, err := br.Peek(1); err != nil {
				break
			}
		}
		if logs := face.logs.String(); strings.Contains(logs, "panic") {
			t.Fatalf("the face panicked:\n%s", logs)
		}
	})
}
