package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/localclient"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/sock"
)

// TestDaemonStop: `mcpx stop` with a call in flight. The host gets an
// error saying mcpx is stopping, and the upstream a cancel with that
// reason. There is no daemon in the in-process mode; its counterpart is
// TestServeInProcessTerminated.
func TestDaemonStop(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	id := harness.SendCall(h, "950", "demo__wait", map[string]any{"seconds": 30}, map[string]any{"progressToken": 950, harness.MarkerKey: "stop"})
	up := harness.UpstreamRequest(e, "demo", "stop")

	stdout, stderr, code := e.Run(harness.WaitLong, "stop", "--config", cfg)
	if code != 0 {
		t.Fatalf("mcpx stop exited %d: %s%s", code, stdout, stderr)
	}
	got, _ := harness.ResponseError(t, h, id)
	if got.Code != harness.CodeStopping || got.Kind != "stopping" || got.Message != "mcpx: mcpx is stopping" {
		t.Errorf("error %d %q kind %q, want %d \"mcpx: mcpx is stopping\" kind \"stopping\"", got.Code, got.Message, got.Kind, harness.CodeStopping)
	}
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "mcpx is stopping")
}

// TestServeInProcessTerminated: `mcpx serve --in-process` receives SIGTERM
// with a call in flight: the same end as a daemon stopping.
func TestServeInProcessTerminated(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	ctx, stop := context.WithTimeout(context.Background(), harness.WaitLong)
	defer stop()
	cmd, h, end := serveInProcessLine(t, ctx, e, cfg)
	defer end()
	h.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.Send(`{"jsonrpc":"2.0","id":951,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":30},"_meta":{"` + harness.MarkerKey + `":"term"}}}`)
	up := harness.UpstreamRequest(e, "demo", "term")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	m := h.Response(`951`)
	if m.Error == nil || m.Error.Code != harness.CodeStopping {
		t.Errorf("call 951 after SIGTERM: %+v, want error %d", m, harness.CodeStopping)
	}
	harness.CheckCancel(t, harness.UpstreamCancel(e, "demo", up.ID), "mcpx is stopping")
}

// serveInProcessLine starts `mcpx serve --in-process` with cfg, ended by
// ctx at the latest, with a lineHost on its stdio that has sent initialize
// (2025-11-25) and read the answer. end closes its stdin and waits for it
// to exit: the caller defers it, to run before ctx ends.
func serveInProcessLine(t *testing.T, ctx context.Context, e *mcpxtest.Env, cfg string) (cmd *exec.Cmd, h *harness.LineHost, end func()) {
	t.Helper()
	cmd = e.Command(ctx, "serve", "--in-process", "--config", cfg, "--log-level", "warn")
	stdin, stdout := harness.StartPiped(t, cmd)
	h = &harness.LineHost{T: t, W: stdin, Wake: make(chan struct{}, 1), Done: make(chan struct{})}
	go h.Read(stdout)
	end = func() { stdin.Close(); <-h.Done; _ = cmd.Wait() }
	h.Send(harness.InitializeLine)
	h.Response(`1`)
	return cmd, h, end
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
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 1}}), harness.WaitLong)
	// A mistake of the file's own (the mcpx block), not of one server's,
	// which would leave that server unconfigured and the rest working.
	if err := os.WriteFile(cfg, []byte(`{"mcpx":{"idleTimeot":"5m"},"mcpServers":{"demo":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errb, code := e.Run(harness.WaitLong, "stop", "--config", cfg); code != 2 || !strings.Contains(errb, "mcpx.idleTimeot: unknown field") {
		t.Fatalf("mcpx stop of a broken config: exit %d, %q; want 2 naming the field", code, errb)
	}
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{"x": 2}}), harness.WaitLong)
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
