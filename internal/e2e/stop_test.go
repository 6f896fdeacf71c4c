package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/localclient"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sock"
)

// codeStopping is the error code of a call ended by mcpx shutting down.
const codeStopping = -31002

// TestDaemonStop: `mcpx stop` with a call in flight. The host gets an
// error saying mcpx is stopping, and the upstream a cancel with that
// reason. There is no daemon in the in-process mode; its counterpart is
// TestServeInProcessTerminated.
func TestDaemonStop(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := sendCall(h, "950", "demo__wait", map[string]any{"seconds": 30}, map[string]any{"progressToken": 950, markerKey: "stop"})
	up := upstreamRequest(e, "demo", "stop")

	stdout, stderr, code := e.Run(waitLong, "stop", "--config", cfg)
	if code != 0 {
		t.Fatalf("mcpx stop exited %d: %s%s", code, stdout, stderr)
	}
	got, _ := responseError(t, h, id)
	if got.Code != codeStopping || got.Kind != "stopping" || got.Message != "mcpx: mcpx is stopping" {
		t.Errorf("error %d %q kind %q, want %d \"mcpx: mcpx is stopping\" kind \"stopping\"", got.Code, got.Message, got.Kind, codeStopping)
	}
	checkCancel(t, upstreamCancel(e, "demo", up.ID), "mcpx is stopping")
}

// TestServeInProcessTerminated: `mcpx serve --in-process` receives SIGTERM
// with a call in flight: the same end as a daemon stopping.
func TestServeInProcessTerminated(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	ctx, stop := context.WithTimeout(context.Background(), waitLong)
	defer stop()
	cmd, h, end := serveInProcessLine(t, ctx, e, cfg)
	defer end()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":951,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":30},"_meta":{"` + markerKey + `":"term"}}}`)
	up := upstreamRequest(e, "demo", "term")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	m := h.response(`951`)
	if m.Error == nil || m.Error.Code != codeStopping {
		t.Errorf("call 951 after SIGTERM: %+v, want error %d", m, codeStopping)
	}
	checkCancel(t, upstreamCancel(e, "demo", up.ID), "mcpx is stopping")
}

// serveInProcessLine starts `mcpx serve --in-process` with cfg, ended by
// ctx at the latest, with a lineHost on its stdio that has sent initialize
// (2025-11-25) and read the answer. end closes its stdin and waits for it
// to exit: the caller defers it, to run before ctx ends.
func serveInProcessLine(t *testing.T, ctx context.Context, e *mcpxtest.Env, cfg string) (cmd *exec.Cmd, h *lineHost, end func()) {
	t.Helper()
	cmd = e.Command(ctx, "serve", "--in-process", "--config", cfg, "--log-level", "warn")
	stdin, stdout := startPiped(t, cmd)
	h = &lineHost{t: t, w: stdin, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go h.read(stdout)
	end = func() { stdin.Close(); <-h.done; _ = cmd.Wait() }
	h.send(initializeLine)
	h.response(`1`)
	return cmd, h, end
}

// lineHost is a minimal host on a process's stdio, for tests that manage
// the mcpx process themselves.
type lineHost struct {
	t    *testing.T
	w    io.Writer
	wake chan struct{}
	done chan struct{}

	mu   sync.Mutex
	recv []*jsonrpc.Message
}

func (h *lineHost) read(r io.Reader) {
	defer close(h.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		m, err := jsonrpc.Decode(append([]byte(nil), sc.Bytes()...))
		if err != nil {
			h.t.Errorf("mcpx sent a malformed message %q: %v", sc.Text(), err)
			continue
		}
		h.mu.Lock()
		h.recv = append(h.recv, m)
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

func (h *lineHost) send(line string) {
	h.t.Helper()
	if !json.Valid([]byte(line)) {
		h.t.Fatalf("invalid JSON: %s", line)
	}
	if _, err := io.WriteString(h.w, line+"\n"); err != nil {
		h.t.Fatalf("writing to mcpx: %v", err)
	}
}

// find returns the response to the request with raw id, if it came.
func (h *lineHost) find(rawID string) (*jsonrpc.Message, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.recv {
		if m.IsResponse() && m.ID.String() == rawID {
			return m, true
		}
	}
	return nil, false
}

// response waits for the response to the request with raw id.
func (h *lineHost) response(rawID string) *jsonrpc.Message {
	h.t.Helper()
	deadline := time.NewTimer(waitLong)
	defer deadline.Stop()
	for {
		if m, ok := h.find(rawID); ok {
			return m
		}
		select {
		case <-h.wake:
		case <-h.done:
			if m, ok := h.find(rawID); ok {
				return m
			}
			h.t.Fatalf("mcpx closed its output before answering %s", rawID)
		case <-deadline.C:
			h.t.Fatalf("no response to %s within %s", rawID, waitLong)
		}
	}
}

// TestStopBrokenConfig: a config file an edit has broken as a whole is
// refused by mcpx stop like by every verb (exit 2 naming the field), while the daemon
// goes on with the last good version; a test's cleanup still stops that
// daemon, by its socket.
func TestStopBrokenConfig(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 1}}), waitLong)
	// A mistake of the file's own (the mcpx block), not of one server's,
	// which would leave that server unconfigured and the rest working.
	if err := os.WriteFile(cfg, []byte(`{"mcpx":{"idleTimeot":"5m"},"mcpServers":{"demo":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errb, code := e.Run(waitLong, "stop", "--config", cfg); code != 2 || !strings.Contains(errb, "mcpx.idleTimeot: unknown field") {
		t.Fatalf("mcpx stop of a broken config: exit %d, %q; want 2 naming the field", code, errb)
	}
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 2}}), waitLong)
	socks, _ := filepath.Glob(filepath.Join(e.RuntimeDir(), "d-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("daemon sockets %q, want one", socks)
	}
	e.StopDaemons()
	unlock, err := sock.Lock(strings.TrimSuffix(socks[0], ".sock") + ".lock")
	if err != nil {
		t.Fatalf("the daemon still holds its lock after StopDaemons: %v", err)
	}
	unlock()
	if _, err := (&localclient.Client{Socket: socks[0]}).Status(context.Background()); !errors.Is(err, localclient.ErrNoDaemon) {
		t.Errorf("the daemon's socket after StopDaemons: %v, want no daemon", err)
	}
}
