package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// HTTP upstreams from npm: @modelcontextprotocol/server-everything over
// Streamable HTTP (legacy, behind a recording reverse proxy), and a server
// built on the TypeScript SDK v2 (test/interop/v2server.mjs) as a
// 2026-07-28 upstream that reports what it saw on stdout.

// nodeProc is a node server the test started; it is stopped at cleanup.
type nodeProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startNodeServer runs node with args in the interop directory, with extra
// environment, and calls line for each line of stdout and stderr (from
// their reader goroutines) until the process exits. It is stopped (SIGTERM,
// then SIGKILL) at cleanup.
func startNodeServer(t *testing.T, env []string, line func(stream, text string), args ...string) *nodeProc {
	t.Helper()
	node, interop := mcpxtest.Node(t)
	cmd := exec.Command(node, args...)
	cmd.Dir = interop
	cmd.Env = append(cmd.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe() // closed at cleanup: v2server.mjs exits on it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{cmd: cmd, done: make(chan struct{})}
	var readers sync.WaitGroup
	for name, r := range map[string]io.Reader{"stdout": stdout, "stderr": stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line(name, sc.Text())
			}
		}()
	}
	go func() {
		readers.Wait()
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// freeLoopbackPort returns a loopback TCP port that was free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// wireTap is a reverse proxy in front of an HTTP upstream that records
// every POST it forwards with the upstream's status.
type wireTap struct {
	url string

	mu    sync.Mutex
	posts []*tappedExchange
}

type tappedExchange struct {
	Header http.Header
	Msg    *jsonrpc.Message
	Status int
}

func startWireTap(t *testing.T, target string) *wireTap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &wireTap{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams pass at once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg *jsonrpc.Message
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			msg, _ = jsonrpc.Decode(body)
		}
		rec := &statusWriter{ResponseWriter: w}
		if msg == nil {
			proxy.ServeHTTP(rec, r)
			return
		}
		x := &tappedExchange{Header: r.Header.Clone(), Msg: msg}
		tap.mu.Lock()
		tap.posts = append(tap.posts, x)
		tap.mu.Unlock()
		proxy.ServeHTTP(rec, r)
		tap.mu.Lock()
		x.Status = rec.status
		tap.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	tap.url = ts.URL + u.Path
	return tap
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// exchanges returns the recorded POSTs of a JSON-RPC method.
func (tap *wireTap) exchanges(method string) []tappedExchange {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var out []tappedExchange
	for _, p := range tap.posts {
		if p.Msg.Method == method {
			out = append(out, *p)
		}
	}
	return out
}

// waitExchange waits for a recorded POST that satisfies match. Its Status
// is 0 until the upstream's whole answer went through.
func (tap *wireTap) waitExchange(t *testing.T, what, method string, match func(tappedExchange) bool) tappedExchange {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		for _, p := range tap.exchanges(method) {
			if match(p) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s reached the upstream within %s", what, waitLong)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startEverythingHTTP runs server-everything in streamableHttp mode on a
// free port and returns its MCP endpoint's URL.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	port := freeLoopbackPort(t)
	ready := make(chan struct{})
	var once sync.Once
	startNodeServer(t, []string{fmt.Sprintf("PORT=%d", port)}, func(stream, text string) {
		if strings.Contains(text, "listening on port") {
			once.Do(func() { close(ready) })
		}
	}, everything, "streamableHttp")
	select {
	case <-ready:
	case <-time.After(waitLong):
		t.Fatal("server-everything did not start listening")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// TestHTTPUpstreamEverything: server-everything over Streamable HTTP as a
// legacy upstream, behind a recording proxy: tools/list, a long operation
// whose progress reaches the host before its result, and a host cancel
// that reaches the server as a notifications/cancelled POST (answered 202)
// carrying mcpx's id and the host's reason.
func TestHTTPUpstreamEverything(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		tap := startWireTap(t, startEverythingHTTP(t))
		e := mcpxtest.NewEnv(t)
		cfg := writeServersConfig(t, e, map[string]any{"everything": map[string]any{"type": "http", "url": tap.url}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), waitLong))
		for _, want := range []string{"everything__echo", "everything__trigger-long-running-operation"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}

		id := sendCall(h, "101", "everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 5},
			map[string]any{"progressToken": "ev-1"})
		h.Result(id, waitLong)
		seen := progressBefore(t, h, id, `"ev-1"`)
		if len(seen) != 5 || !slices.IsSorted(seen) {
			t.Errorf("progress at the host: %v, want 5 increasing", seen)
		}

		cid := sendCall(h, "102", "everything__trigger-long-running-operation", map[string]any{"duration": 20, "steps": 40},
			map[string]any{"progressToken": "ev-2"})
		h.WaitFor(waitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
			p, ok := asProgress(t, r)
			return ok && string(p.Token) == `"ev-2"`
		})
		cancel(h, "102", "the host is done")
		c := tap.waitExchange(t, "answered notifications/cancelled", "notifications/cancelled", func(x tappedExchange) bool { return x.Status != 0 })
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(c.Msg.Params, &p); err != nil {
			t.Fatal(err)
		}
		var upID string
		for _, x := range tap.exchanges("tools/call") {
			if strings.Contains(string(x.Msg.Params), `"duration":20`) {
				upID = x.Msg.ID.String()
			}
		}
		if upID == "" || string(p.RequestID) != upID || p.Reason != "cancelled by the host: the host is done" {
			t.Errorf("cancellation %s; want requestId %s (mcpx's id of the call) and the host's reason", c.Msg.Params, upID)
		}
		if c.Status != http.StatusAccepted || c.Header.Get("Mcp-Session-Id") == "" {
			t.Errorf("server-everything answered the cancellation %d (session %q), want 202", c.Status, c.Header.Get("Mcp-Session-Id"))
		}
		h.NoResponse(cid, settle)
		t.Logf("%s: server-everything accepted notifications/cancelled %s", mode, c.Msg.Params)
	})
}

// v2Events reads what v2server.mjs reports.
type v2Events struct {
	mu     sync.Mutex
	events []v2Event
	wake   chan struct{}
}

type v2Event struct {
	Event         string            `json:"event"`
	URL           string            `json:"url"`
	Tool          string            `json:"tool"`
	Marker        string            `json:"marker"`
	ProgressToken json.RawMessage   `json:"progressToken"`
	Headers       map[string]string `json:"headers"`
	Reason        string            `json:"reason"`
	At            float64           `json:"at"` // ms since the epoch
}

func (ev v2Event) time() time.Time { return time.UnixMicro(int64(ev.At * 1000)) }

// startV2Server runs v2server.mjs and returns its reports and URL.
func startV2Server(t *testing.T) (*v2Events, string) {
	t.Helper()
	evs := &v2Events{wake: make(chan struct{}, 1)}
	_, interop := mcpxtest.Node(t)
	startNodeServer(t, nil, func(stream, text string) {
		var ev v2Event
		if stream != "stdout" || json.Unmarshal([]byte(text), &ev) != nil {
			t.Logf("v2server %s: %s", stream, text)
			return
		}
		evs.mu.Lock()
		evs.events = append(evs.events, ev)
		evs.mu.Unlock()
		select {
		case evs.wake <- struct{}{}:
		default:
		}
	}, filepath.Join(interop, "v2server.mjs"))
	return evs, evs.wait(t, "listening", func(ev v2Event) bool { return ev.Event == "listening" }).URL
}

func (evs *v2Events) find(match func(v2Event) bool) (v2Event, bool) {
	evs.mu.Lock()
	defer evs.mu.Unlock()
	for _, ev := range evs.events {
		if match(ev) {
			return ev, true
		}
	}
	return v2Event{}, false
}

func (evs *v2Events) wait(t *testing.T, what string, match func(v2Event) bool) v2Event {
	t.Helper()
	deadline := time.NewTimer(waitLong)
	defer deadline.Stop()
	for {
		if ev, ok := evs.find(match); ok {
			return ev
		}
		select {
		case <-evs.wake:
		case <-deadline.C:
			t.Fatalf("v2server reported no %s within %s", what, waitLong)
		}
	}
}

// TestHTTPUpstreamTSv2: a TypeScript SDK v2 server as a 2026-07-28
// upstream: tools/list without the tool whose x-mcp-header is invalid; a
// call whose progress reaches the host before its result; a call whose
// x-mcp-header parameter arrives as Mcp-Param-Region (the server checks
// it); and a host cancel that aborts the server's request (its abort
// signal fires) with no notifications/cancelled.
func TestHTTPUpstreamTSv2(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		evs, url := startV2Server(t)
		tap := startWireTap(t, url)
		e := mcpxtest.NewEnv(t)
		cfg := writeServersConfig(t, e, map[string]any{"v2": map[string]any{"type": "http", "url": tap.url}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), waitLong))
		for _, want := range []string{"v2__slow", "v2__region"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}
		if slices.Contains(names, "v2__bad_number") {
			t.Errorf("tools/list has v2__bad_number, whose x-mcp-header is invalid")
		}

		id := sendCall(h, "101", "v2__slow", map[string]any{"steps": 5, "interval_ms": 10, "marker": "p1"},
			map[string]any{"progressToken": "v2-tok"})
		if got := resultText(t, h.Result(id, waitLong)); got != "done p1" {
			t.Errorf("result %q", got)
		}
		seen := progressBefore(t, h, id, `"v2-tok"`)
		if !slices.Equal(seen, []float64{1, 2, 3, 4, 5}) {
			t.Errorf("progress at the host: %v, want 1..5", seen)
		}
		call := evs.wait(t, "the call p1", func(ev v2Event) bool { return ev.Event == "call" && ev.Marker == "p1" })
		if call.Headers["mcp-protocol-version"] != "2026-07-28" || call.Headers["mcp-method"] != "tools/call" || call.Headers["mcp-name"] != "slow" {
			t.Errorf("the call's headers: %v", call.Headers)
		}

		rid := h.Request("tools/call", map[string]any{"name": "v2__region", "arguments": map[string]any{"region": "eu-west"}})
		if got := resultText(t, h.Result(rid, waitLong)); got != "region eu-west header eu-west" {
			t.Errorf("region: %q", got)
		}

		cid := sendCall(h, "102", "v2__slow", map[string]any{"steps": 100000, "interval_ms": 20, "marker": "c1"},
			map[string]any{"progressToken": "v2-cancel"})
		h.WaitFor(waitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
			p, ok := asProgress(t, r)
			return ok && string(p.Token) == `"v2-cancel"`
		})
		sent := time.Now()
		cancel(h, "102", "stop")
		ab := evs.wait(t, "the abort of c1", func(ev v2Event) bool { return ev.Event == "aborted" && ev.Marker == "c1" })
		h.NoResponse(cid, settle)
		if _, ok := evs.find(func(ev v2Event) bool { return ev.Event == "finished" && ev.Marker == "c1" }); ok {
			t.Errorf("the cancelled call ran to its end")
		}
		if n := len(tap.exchanges("notifications/cancelled")); n != 0 {
			t.Errorf("%d notifications/cancelled posted to a 2026-07-28 upstream", n)
		}
		for _, x := range append(tap.exchanges("initialize"), tap.exchanges("tools/call")...) {
			if x.Msg.Method == "initialize" || x.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a 2026-07-28 upstream got %s (session %q)", x.Msg.Method, x.Header.Get("Mcp-Session-Id"))
			}
		}
		t.Logf("%s: host cancel -> v2 server's abort signal in %v (reason %q)", mode, ab.time().Sub(sent), ab.Reason)

		// The upstream is still usable.
		if got := resultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "v2__slow",
			"arguments": map[string]any{"steps": 1, "marker": "after"}}), waitLong)); got != "done after" {
			t.Errorf("after the cancel: %q", got)
		}
	})
}

// startDemoHTTP runs `mcpx demo -http 127.0.0.1:0` with args, recording to
// files under a directory of the test's own (so that it can be started
// before the test's Env, and outlive the mcpx the Env stops), and returns
// its URL and record and wire log paths.
func startDemoHTTP(t *testing.T, args ...string) (url, record, wire string) {
	t.Helper()
	dir := t.TempDir()
	record, wire = filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "wire.log")
	cmd := exec.Command(mcpxtest.Binary(t), append([]string{"demo", "-http", "127.0.0.1:0", "-record", record, "-wire-log", wire}, args...)...)
	cmd.Env = append(cmd.Environ(), "GORACE="+mcpxtest.RaceQuickExit)
	cmd.Stderr = stderrToLog{t}
	stdin, stdout := startPiped(t, cmd)
	done := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close() // the demo runs until its stdin ends
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("mcpx demo -http did not exit within 10s of its stdin closing")
		}
	})
	select {
	case url = <-urls:
	case <-done:
		t.Fatal("mcpx demo -http exited before listening")
	case <-time.After(waitLong):
		t.Fatal("mcpx demo -http printed no address")
	}
	return url, record, wire
}

type stderrToLog struct{ t *testing.T }

func (w stderrToLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestHTTPUpstreamDemo: the repo's own fixture over HTTP in each era, as
// mcpx's upstream. Legacy: the fixture closes every request's stream after
// two events and pings mcpx before each call, so a call only completes if
// mcpx answers the ping and resumes the stream with GET and Last-Event-ID;
// a host cancel arrives as notifications/cancelled with mcpx's id and the
// host's reason. Modern: the fixture sees the request metadata headers,
// and a host cancel as the end of the call's stream, with no
// notifications/cancelled at all.
func TestHTTPUpstreamDemo(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				args := []string{"-era", era}
				if era == "legacy" {
					args = append(args, "-sse-close-after", "2", "-ping-client")
				}
				url, record, wire := startDemoHTTP(t, args...)
				e := mcpxtest.NewEnv(t)
				for from, to := range map[string]string{record: e.RecordPath("demo"), wire: e.WireLogPath("demo")} {
					if err := os.Symlink(from, to); err != nil {
						t.Fatal(err)
					}
				}
				cfg := writeServersConfig(t, e, map[string]any{"demo": map[string]any{"type": "http", "url": url}})
				h := e.StartHost(mode, cfg)
				h.Initialize("2025-11-25")

				names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), waitLong))
				if !slices.Contains(names, "demo__export") {
					t.Fatalf("tools/list lacks demo__export: %v", names)
				}

				id := sendCall(h, "201", "demo__export", map[string]any{"seconds": 0.5, "steps": 5},
					map[string]any{"progressToken": "d-1", markerKey: "export-1"})
				if got := resultText(t, h.Result(id, waitLong)); got != "exported 1000 records in 5 parts" {
					t.Errorf("export: %q", got)
				}
				seen := progressBefore(t, h, id, `"d-1"`)
				if len(seen) != 5 || !slices.IsSorted(seen) {
					t.Errorf("progress at the host: %v, want 5 increasing", seen)
				}
				up := upstreamRequest(e, "demo", "export-1")
				if era == "legacy" {
					resumed := 0
					for _, ev := range e.Records("demo") {
						switch ev.Event {
						case demo.EventResumed:
							resumed++
						case demo.EventPingAnswered:
							if ev.Outcome != demo.OutcomeResult {
								t.Errorf("mcpx answered the fixture's ping with %s", ev.Outcome)
							}
						}
					}
					if resumed == 0 {
						t.Errorf("the fixture recorded no resumption; records:\n%s", describe(e.Records("demo")))
					}
				} else {
					for k, want := range map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "export"} {
						if got := up.Headers[k]; got != want {
							t.Errorf("the fixture saw %s = %q, want %q (headers %v)", k, got, want, up.Headers)
						}
					}
				}

				cid := sendCall(h, "202", "demo__export", map[string]any{"seconds": 30},
					map[string]any{"progressToken": "d-2", markerKey: "cancel-1"})
				h.WaitFor(waitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
					p, ok := asProgress(t, r)
					return ok && string(p.Token) == `"d-2"`
				})
				cancel(h, "202", "enough")
				up = upstreamRequest(e, "demo", "cancel-1")
				ev := upstreamCancel(e, "demo", up.ID)
				if era == "legacy" {
					checkCancel(t, ev, "cancelled by the host: enough")
				} else {
					checkCancel(t, ev, demo.ReasonStreamClosed)
				}
				e.WaitRecord("demo", waitLong, func(ev demo.Event) bool {
					return ev.Event == demo.EventFinished && string(ev.ID) == string(up.ID) && ev.Outcome == demo.OutcomeCancelled
				})
				h.NoResponse(cid, settle)
				for _, ev := range e.Records("demo") {
					if ev.Event == demo.EventCancelledHTTP || (era == "modern" && ev.Event == demo.EventCancelled && ev.Reason != demo.ReasonStreamClosed) {
						t.Errorf("a 2026-07-28 upstream got a cancellation message: %+v", ev)
					}
				}
				t.Logf("%s %s: upstream cancellation %q", era, mode, ev.Reason)
			})
		})
	}
}
