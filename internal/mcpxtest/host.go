package mcpxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mcpx/internal/config"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/daemon"
	"mcpx/internal/jsonrpc"
)

// Mode is how a test runs mcpx.
type Mode string

// Run modes.
const (
	// InProcess runs the gateway in the test process on a pipe.
	InProcess Mode = "inprocess"
	// Daemon spawns `mcpx serve` on pipes, which it hands to a daemon it
	// starts (as it does a host's).
	Daemon Mode = "daemon"
)

// Modes lists every run mode; integration tests run in each.
var Modes = []Mode{InProcess, Daemon}

// ForEachMode runs f as a subtest per mode.
func ForEachMode(t *testing.T, f func(t *testing.T, mode Mode)) {
	for _, m := range Modes {
		t.Run(string(m), func(t *testing.T) { f(t, m) })
	}
}

// ForEachModeParallel is ForEachMode with the modes' subtests parallel
// (t.Parallel): for a test whose runs share nothing (each makes its own
// Env, ports and processes) and mostly wait on them.
func ForEachModeParallel(t *testing.T, f func(t *testing.T, mode Mode)) {
	for _, m := range Modes {
		t.Run(string(m), func(t *testing.T) { t.Parallel(); f(t, m) })
	}
}

// Received is one message the host received, with when.
type Received struct {
	At  time.Time
	Raw []byte
	Msg *jsonrpc.Message
}

// Host is a raw JSON-RPC host connected to mcpx: it writes exactly what a
// test says and records everything it receives, in order.
type Host struct {
	t      testing.TB
	w      io.Writer
	closeW func() error
	done   chan struct{} // the reader ended
	stop   func()        // ends mcpx and waits for it

	mu     sync.Mutex
	recv   []Received
	wake   chan struct{}
	nextID int
	sent   []string

	status atomic.Pointer[func() apitype.Status] // in-process only
}

// StartHost connects a host to mcpx in mode with the config at cfgPath.
func (e *Env) StartHost(mode Mode, cfgPath string) *Host {
	e.T.Helper()
	h := &Host{t: e.T, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	var r io.Reader
	switch mode {
	case InProcess:
		hostEnd, mcpxEnd := net.Pipe()
		cfg := e.LoadConfig(cfgPath)
		log := slog.New(slog.NewTextHandler(LogWriter(e.T), &slog.HandlerOptions{Level: slog.LevelWarn}))
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() {
			// Upstreams run under the built mcpx as their supervisor, as
			// with `mcpx serve --in-process`.
			files := InProcessFiles(e)
			observe := func(status func() apitype.Status) { h.status.Store(&status) }
			served <- daemon.ServeStdio(ctx, &daemon.Options{Config: cfg, Version: "test", Logger: log, Shim: e.Bin, Files: files, Observe: observe}, mcpxEnd)
		}()
		r, h.w = hostEnd, hostEnd
		h.closeW = func() error { return hostEnd.Close() }
		h.stop = func() {
			hostEnd.Close()
			select {
			case err := <-served:
				if err != nil {
					e.T.Errorf("mcpx returned %v", err)
				}
			case <-time.After(15 * time.Second):
				cancel()
				e.T.Errorf("mcpx did not return within 15s of the host leaving")
				<-served
			}
			cancel()
		}
	case Daemon:
		cmd := exec.Command(e.Bin, "serve", "--config", cfgPath, "--log-level", "warn")
		cmd.Env = e.Environ()
		cmd.Stderr = LogWriter(e.T)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			e.T.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			e.T.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			e.T.Fatal(err)
		}
		r, h.w, h.closeW = stdout, stdin, stdin.Close
		h.stop = func() {
			stdin.Close()
			waited := make(chan error, 1)
			go func() { <-h.done; waited <- cmd.Wait() }()
			select {
			case <-waited:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-waited
				e.T.Errorf("mcpx serve did not exit within 15s of its stdin closing")
			}
		}
	default:
		e.T.Fatalf("unknown mode %q", mode)
	}
	go h.read(r)
	e.T.Cleanup(h.Close)
	return h
}

func (h *Host) read(r io.Reader) {
	defer close(h.done)
	jr := jsonrpc.NewReader(r, 64<<20)
	for {
		line, err := jr.ReadLine()
		if err != nil {
			return
		}
		raw := append([]byte(nil), line...)
		msg, err := jsonrpc.Decode(raw)
		if err != nil {
			h.t.Errorf("mcpx sent a malformed message %q: %v", raw, err)
			continue
		}
		h.mu.Lock()
		h.recv = append(h.recv, Received{At: time.Now(), Raw: raw, Msg: msg})
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// Close ends the host's side and waits for mcpx to finish. It is
// idempotent.
func (h *Host) Close() {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// SendRaw writes one line as it is.
func (h *Host) SendRaw(line string) {
	h.t.Helper()
	h.mu.Lock()
	h.sent = append(h.sent, line)
	h.mu.Unlock()
	if _, err := io.WriteString(h.w, line+"\n"); err != nil {
		h.t.Fatalf("writing to mcpx: %v", err)
	}
}

// Send writes a message built from v.
func (h *Host) Send(v any) {
	h.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	h.SendRaw(string(b))
}

// Request sends a request with a fresh integer id and returns the id.
func (h *Host) Request(method string, params any) jsonrpc.ID {
	h.t.Helper()
	h.mu.Lock()
	h.nextID++
	id := jsonrpc.NewIntID(int64(h.nextID))
	h.mu.Unlock()
	h.Send(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": method, "params": params})
	return id
}

// Notify sends a notification.
func (h *Host) Notify(method string, params any) {
	h.t.Helper()
	h.Send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Received returns everything received so far.
func (h *Host) Received() []Received {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Received(nil), h.recv...)
}

// Status returns the status of the in-process gateway h talks to, as the
// local API reports it; false in daemon mode (ask the daemon instead).
func (h *Host) Status() (apitype.Status, bool) {
	if f := h.status.Load(); f != nil {
		return (*f)(), true
	}
	return apitype.Status{}, false
}

// Sent returns every line the host wrote.
func (h *Host) Sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sent...)
}

// WaitFor waits until some received message satisfies match.
func (h *Host) WaitFor(timeout time.Duration, what string, match func(Received) bool) Received {
	h.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, r := range h.Received() {
			if match(r) {
				return r
			}
		}
		select {
		case <-h.wake:
		case <-h.done:
			for _, r := range h.Received() {
				if match(r) {
					return r
				}
			}
			h.t.Fatalf("mcpx closed the stream before %s", what)
		case <-deadline.C:
			h.t.Fatalf("no %s within %s; received:\n%s", what, timeout, h.dump())
		}
	}
}

// Response waits for the response to id.
func (h *Host) Response(id jsonrpc.ID, timeout time.Duration) *jsonrpc.Message {
	h.t.Helper()
	return h.WaitFor(timeout, "response to id "+id.String(), func(r Received) bool {
		return r.Msg.IsResponse() && r.Msg.ID == id
	}).Msg
}

// Result waits for the response to id and fails the test unless it is a
// result.
func (h *Host) Result(id jsonrpc.ID, timeout time.Duration) json.RawMessage {
	h.t.Helper()
	m := h.Response(id, timeout)
	if m.Error != nil {
		h.t.Fatalf("request %s failed: %d %s %s", id, m.Error.Code, m.Error.Message, m.Error.Data)
	}
	return m.Result
}

// NoResponse checks that no response to id arrives within d.
func (h *Host) NoResponse(id jsonrpc.ID, d time.Duration) {
	h.t.Helper()
	time.Sleep(d)
	for _, r := range h.Received() {
		if r.Msg.IsResponse() && r.Msg.ID == id {
			h.t.Fatalf("got a response to %s, want none: %s", id, r.Raw)
		}
	}
}

func (h *Host) dump() string {
	var b strings.Builder
	for _, r := range h.Received() {
		fmt.Fprintf(&b, "  %s\n", r.Raw)
	}
	return b.String()
}

// Initialize runs the legacy handshake at version and returns the result.
func (h *Host) Initialize(version string) json.RawMessage {
	h.t.Helper()
	id := h.Request("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpxtest", "version": "1"},
	})
	res := h.Result(id, 30*time.Second)
	h.Notify("notifications/initialized", nil)
	return res
}

// ModernMeta is the _meta of a 2026-07-28 request, plus extra keys.
func ModernMeta(extra map[string]any) map[string]any {
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpxtest", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// InProcessFiles are the files of a gateway run in the test process: the
// job store every in-process gateway of e shares, as every mcpx of a
// user shares one.
func InProcessFiles(e *Env) config.DaemonFiles {
	return config.DaemonFiles{Jobs: e.Path("jobs-inprocess.db"), JobsLock: e.Path("jobs-inprocess.lock")}
}
