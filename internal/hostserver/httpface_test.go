package hostserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mcpx/internal/hosthttp"
)

// TestModernJobLeavesWorker: a 2026-07-28 request whose call becomes a
// job (mcpx_call in the background) is given up by its session, and the
// face's shared worker running it leaves the face's count with it: the
// face's Close, which waits for its workers, returns although the job's
// goroutine was one of them.
func TestModernJobLeavesWorker(t *testing.T) {
	s := benchJobServer(t, map[string]any{"timeout": 0})
	face := s.HTTP(nil)
	ts := httptest.NewServer(face.Handler(hosthttp.Access{}))
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcpx_call","arguments":{"name":"demo__echo","arguments":{"n":1},"background":true}` + modernMeta + `}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(hosthttp.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(hosthttp.HeaderMethod, "tools/call")
	req.Header.Set(hosthttp.HeaderName, "mcpx_call")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !jobIDRe.Match(got) {
		t.Fatalf("HTTP %d: %s, want the job's id", resp.StatusCode, got)
	}
	closed := make(chan struct{})
	go func() { defer close(closed); face.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the face's Close still waits 10s later: the job's worker was never counted gone")
	}
	s.Close()
}
