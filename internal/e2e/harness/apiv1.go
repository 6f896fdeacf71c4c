package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
)

// The stable local API, /v1, lives in the daemon: these tests run against
// it, on its socket and on its HTTP listener.

// V1Client speaks /v1 to a daemon, on its socket (base "") or at an HTTP
// base URL with a token.
type V1Client struct {
	T     *testing.T
	Http  *http.Client
	Base  string
	Token string
}

// StartV1Daemon starts the daemon of cfg (mcpx tools starts it) and
// returns a /v1 client on its socket, and its status.
func StartV1Daemon(t *testing.T, e *mcpxtest.Env, cfg string) (*V1Client, apitype.Status) {
	t.Helper()
	if _, errOut, code := e.Run(WaitLong, "tools", "--config", cfg); code != 0 {
		t.Fatalf("mcpx tools: exit %d: %s", code, errOut)
	}
	st := DaemonStatus(t, e, cfg)
	c := &V1Client{T: t, Base: "http://" + apitype.Host, Http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", st.Socket)
		},
	}}}
	t.Cleanup(c.Http.CloseIdleConnections)
	return c, st
}

// Do sends a request and returns the response (the caller closes its body).
func (c *V1Client) Do(ctx context.Context, method, path string, body any, header map[string]string) *http.Response {
	c.T.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Http.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// Json sends a request and decodes its JSON answer into out (if not nil),
// returning the status.
func (c *V1Client) Json(method, path string, body, out any) int {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLong)
	defer cancel()
	resp := c.Do(ctx, method, path, body, nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			c.T.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// CallStream is one POST /v1/call's event stream.
type CallStream struct {
	Resp *http.Response
	Sc   *bufio.Scanner
	T    *testing.T
}

func (c *V1Client) Call(req apitype.CallRequest) *CallStream {
	c.T.Helper()
	resp := c.Do(context.Background(), http.MethodPost, apitype.PathV1Call, req, nil)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.T.Fatalf("POST /v1/call: %d %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		c.T.Errorf("Content-Type = %q, want application/x-ndjson", ct)
	}
	c.T.Cleanup(func() { resp.Body.Close() })
	return &CallStream{Resp: resp, Sc: bufio.NewScanner(resp.Body), T: c.T}
}

// Next reads the next event, failing after waitLong.
func (s *CallStream) Next() apitype.CallEvent {
	s.T.Helper()
	got := make(chan bool, 1)
	timer := time.AfterFunc(WaitLong, func() { s.Resp.Body.Close() })
	defer timer.Stop()
	go func() { got <- s.Sc.Scan() }()
	if !<-got {
		s.T.Fatalf("the call's stream ended without its final event: %v", s.Sc.Err())
	}
	var ev apitype.CallEvent
	if err := json.Unmarshal(s.Sc.Bytes(), &ev); err != nil {
		s.T.Fatalf("event %s: %v", s.Sc.Bytes(), err)
	}
	return ev
}

// Final reads events to the final one, returning it and the progress seen.
func (s *CallStream) Final() (apitype.CallEvent, []apitype.Progress) {
	s.T.Helper()
	var progress []apitype.Progress
	for {
		ev := s.Next()
		switch ev.Type {
		case "progress":
			progress = append(progress, *ev.Progress)
		case "result", "error":
			return ev, progress
		default:
			s.T.Fatalf("unexpected event %+v", ev)
		}
	}
}

// ExportRequest waits for the demo's record of the export call.
func ExportRequest(e *mcpxtest.Env) demo.Event {
	e.T.Helper()
	return e.WaitRecord("demo", WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventRequest && ev.Tool == "export"
	})
}
