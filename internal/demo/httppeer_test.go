package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/sse"
)

// addrLine is the one line ServeHTTP prints.
var addrLine = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+/mcp)\n$`)

// hpeer is a test client of ServeHTTP, with net/http.
type hpeer struct {
	t      *testing.T
	url    string
	client *http.Client
	tr     *http.Transport
	events chan Event
	seen   []Event // events received and not yet matched
	stdin  *io.PipeWriter
	rest   chan string // what ServeHTTP wrote after the address line
	done   chan error
	cancel context.CancelFunc
	closed bool
	err    error
}

// startHTTP runs ServeHTTP on 127.0.0.1:0 and reads its address line.
// Cleanup closes its stdin (which stops it) and checks it returns.
func startHTTP(t *testing.T, opts *Options) *hpeer {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	p := &hpeer{t: t, events: make(chan Event, 1<<14), rest: make(chan string, 1), done: make(chan error, 1)}
	if opts.OnEvent == nil {
		opts.OnEvent = func(e Event) { p.events <- e }
	}
	if opts.Exit == nil {
		opts.Exit = func(int) {}
	}
	opts.HTTP = "127.0.0.1:0"
	var outR *io.PipeReader
	p.stdin, outR, p.cancel = onPipes(ServeHTTP, opts, p.done)
	br := bufio.NewReader(outR)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the address line: %v (%q)", err, line)
	}
	go func() {
		b, _ := io.ReadAll(br)
		p.rest <- string(b)
	}()
	m := addrLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("address line %q", line)
	}
	p.url = m[1]
	p.tr = &http.Transport{}
	p.client = &http.Client{Transport: p.tr}
	t.Cleanup(func() { p.close() })
	return p
}

// close ends stdin and returns ServeHTTP's result.
func (p *hpeer) close() error {
	if p.closed {
		return p.err
	}
	p.closed = true
	defer p.cancel()
	p.stdin.Close()
	select {
	case p.err = <-p.done:
	case <-time.After(deadline):
		p.t.Error("ServeHTTP did not return after stdin closed")
		return nil
	}
	if rest := <-p.rest; rest != "" {
		p.t.Errorf("ServeHTTP wrote more than its address line: %q", rest)
	}
	p.tr.CloseIdleConnections()
	return p.err
}

// event returns the first event that matches, waiting for it if need be.
// Events passed over stay for later calls.
func (p *hpeer) event(match func(Event) bool) Event {
	p.t.Helper()
	for i, e := range p.seen {
		if match(e) {
			p.seen = slices.Delete(p.seen, i, i+1)
			return e
		}
	}
	timeout := time.After(deadline)
	for {
		select {
		case e := <-p.events:
			if match(e) {
				return e
			}
			p.seen = append(p.seen, e)
		case <-timeout:
			p.t.Fatal("no matching event within the deadline")
		}
	}
}

// kind matches events of one kind.
func kind(k string) func(Event) bool { return func(e Event) bool { return e.Event == k } }

// headers are request headers; "" values are not sent.
type headers map[string]string

// modernHeaders are the standard headers of a 2026-07-28 request.
func modernHeaders(method, name string) headers {
	return headers{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
}

// with returns h with more headers.
func (h headers) with(more headers) headers {
	out := headers{}
	for k, v := range h {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// request sends an HTTP request to the endpoint.
func (p *hpeer) request(ctx context.Context, method string, h headers, body string) (*http.Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.url, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range h {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return p.client.Do(req)
}

// post POSTs a body and returns the response.
func (p *hpeer) post(h headers, body string) *http.Response {
	p.t.Helper()
	resp, err := p.request(context.Background(), http.MethodPost, h, body)
	if err != nil {
		p.t.Fatalf("POST %s: %v", body, err)
	}
	return resp
}

// jsonAnswer POSTs a request and reads its JSON answer, checking its status.
func (p *hpeer) jsonAnswer(h headers, body string, status int) *jsonrpc.Message {
	p.t.Helper()
	resp := p.post(h, body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("reading the answer to %s: %v", body, err)
	}
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" {
		p.t.Fatalf("POST %s: %s, %q: %s; want %d JSON", body, resp.Status, resp.Header.Get("Content-Type"), b, status)
	}
	m, err := jsonrpc.Decode(b)
	if err != nil {
		p.t.Fatalf("answer %s: %v", b, err)
	}
	return m
}

// accepted POSTs a notification or response and checks the 202.
func (p *hpeer) accepted(h headers, body string) {
	p.t.Helper()
	resp := p.post(h, body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
		p.t.Fatalf("POST %s: %s %q, want 202 with no body", body, resp.Status, b)
	}
}

// status sends a request and returns its status and JSON-RPC error (nil if
// the body holds none).
func (p *hpeer) status(method string, h headers, body string) (int, *jsonrpc.Error) {
	p.t.Helper()
	resp, err := p.request(context.Background(), method, h, body)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	return statusOf(resp)
}

// statusOf reads and closes resp, and returns its status and JSON-RPC
// error (nil if the body holds none).
func statusOf(resp *http.Response) (int, *jsonrpc.Error) {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m, err := jsonrpc.Decode(b)
	if err != nil {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, m.Error
}

// initialize opens a legacy session at version and sends initialized.
func (p *hpeer) initialize(version string) string {
	p.t.Helper()
	resp := p.post(nil, initReq("1", version))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		p.t.Fatalf("initialize: %s, session %q: %s", resp.Status, sid, b)
	}
	p.accepted(headers{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// sseStream is an SSE answer being read.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	rd   *sse.Reader
	raw  *bytes.Buffer // what was read so far, as sent
}

// openSSE POSTs a request and checks that it is answered with SSE.
func (p *hpeer) openSSE(ctx context.Context, h headers, body string) *sseStream {
	p.t.Helper()
	resp, err := p.request(ctx, http.MethodPost, h, body)
	if err != nil {
		p.t.Fatalf("POST %s: %v", body, err)
	}
	return p.checkSSE(resp, body)
}

// resume GETs the stream after lastID.
func (p *hpeer) resume(sid, lastID string) *sseStream {
	p.t.Helper()
	resp, err := p.request(context.Background(), http.MethodGet, headers{"Mcp-Session-Id": sid, "Last-Event-ID": lastID}, "")
	if err != nil {
		p.t.Fatalf("GET Last-Event-ID %s: %v", lastID, err)
	}
	return p.checkSSE(resp, "GET "+lastID)
}

func (p *hpeer) checkSSE(resp *http.Response, what string) *sseStream {
	p.t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p.t.Fatalf("%s: %s %q: %s, want 200 SSE", what, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	s := &sseStream{t: p.t, resp: resp, raw: &bytes.Buffer{}}
	s.rd = sse.NewReader(io.TeeReader(resp.Body, s.raw), 0)
	p.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next message and its event; nil at the end of the stream.
func (s *sseStream) next() (*jsonrpc.Message, *sse.Event) {
	s.t.Helper()
	ev, err := s.rd.Next()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		s.t.Fatalf("reading SSE: %v", err)
	}
	m, err := jsonrpc.Decode(ev.Data)
	if err != nil {
		s.t.Fatalf("SSE event %q: %v", ev.Data, err)
	}
	return m, ev
}

// rest reads the stream to its end: its notifications and its response
// (nil if none came).
func (s *sseStream) rest() ([]*jsonrpc.Message, *jsonrpc.Message) {
	s.t.Helper()
	var notes []*jsonrpc.Message
	for {
		m, _ := s.next()
		switch {
		case m == nil:
			return notes, nil
		case m.IsResponse():
			if extra, _ := s.next(); extra != nil {
				s.t.Errorf("a message after the response: %s", extra.Encode())
			}
			return notes, m
		default:
			notes = append(notes, m)
		}
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// progressValues returns the progress values of notifications.
func progressValues(t *testing.T, notes []*jsonrpc.Message) []float64 {
	t.Helper()
	var out []float64
	for _, n := range notes {
		out = append(out, progressOf(t, n).Progress)
	}
	return out
}

// seq returns 1..n as float64s.
func seq(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}

// modernCall is a 2026-07-28 tools/call body; meta extra members may be "".
func modernCall(id, tool, args, metaExtra string) string {
	return callReq(id, tool, args, modernMeta(metaExtra))
}

func modernReq(id, method, params string) string {
	if params == "" {
		params = `{}`
	}
	obj, err := jsonrpc.ParseObject([]byte(params))
	if err != nil {
		panic(err)
	}
	obj.Set("_meta", json.RawMessage(modernMeta("")))
	return req(id, method, string(obj.Bytes()))
}

func b64(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
