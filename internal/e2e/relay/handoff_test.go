package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// forEachWay runs f as a subtest for each way, with an installation set
// to it and a config with one demo server.
func forEachWay(t *testing.T, f func(t *testing.T, way string, e *mcpxtest.Env, cfg string)) {
	for _, way := range harness.HandoffWays {
		t.Run(way, func(t *testing.T) {
			e := mcpxtest.NewEnv(t)
			harness.SetHandoff(e, way)
			f(t, way, e, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}))
		})
	}
}

// servePipes is `mcpx serve` on pipes the test owns both ends of, so that
// it can see what is in them.
type servePipes struct {
	cmd *exec.Cmd
	in  *os.File // the host's output: serve's stdin
	out *os.File // the host's input: serve's stdout
}

func startServePipes(t *testing.T, e *mcpxtest.Env, cfg string) *servePipes {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.Bin, "serve", "--config", cfg, "--log-level", "warn")
	cmd.Env = e.Environ()
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Stderr = testLog{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	p := &servePipes{cmd: cmd, in: inW, out: outR}
	t.Cleanup(func() {
		p.in.Close()
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case <-waited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-waited
			t.Errorf("mcpx serve did not exit within 15s of its stdin closing")
		}
		p.out.Close()
	})
	return p
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// buffered returns how many bytes wait in the pipe f is an end of.
func buffered(t *testing.T, f *os.File) int {
	t.Helper()
	n, err := pipeCtl(f, func(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.TIOCINQ) }) // FIONREAD
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pipeCtl runs op on f's descriptor without making f blocking (as Fd
// would: its deadlines would stop working).
func pipeCtl(f *os.File, op func(fd int) (int, error)) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var opErr error
	if err := rc.Control(func(fd uintptr) { n, opErr = op(int(fd)) }); err != nil {
		return 0, err
	}
	return n, opErr
}

// waitBuffered waits until the pipe holds a number of bytes that ok accepts.
func waitBuffered(t *testing.T, f *os.File, what string, ok func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(harness.WaitLong)
	for n := buffered(t, f); !ok(n); n = buffered(t, f) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %d bytes in the pipe after %s", what, n, harness.WaitLong)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pipeID names the pipe behind descriptor fd of process pid.
func pipeID(t *testing.T, pid, fd int) string {
	t.Helper()
	s, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openFiles returns what the descriptors of process pid point at.
func openFiles(t *testing.T, pid int) map[string]bool {
	t.Helper()
	links, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	files := map[string]bool{}
	for _, l := range links {
		if s, err := os.Readlink(l); err == nil {
			files[s] = true
		}
	}
	return files
}

// startInitialized starts serve on pipes with a host that has done its
// handshake (2025-11-25).
func startInitialized(t *testing.T, e *mcpxtest.Env, cfg string) (*servePipes, *harness.LineHost) {
	t.Helper()
	p := startServePipes(t, e, cfg)
	h := &harness.LineHost{T: t, W: p.in, Wake: make(chan struct{}, 1), Done: make(chan struct{})}
	go h.Read(p.out)
	h.Send(harness.InitializeLine)
	h.Response(`1`)
	h.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p, h
}

// TestServeHandsStdioToDaemon: by default the daemon holds the host's
// pipes itself (serve is out of the message path); with MCPX_HANDOFF=off
// it does not. Either way the host is served.
func TestServeHandsStdioToDaemon(t *testing.T) {
	forEachWay(t, func(t *testing.T, way string, e *mcpxtest.Env, cfg string) {
		p, h := startInitialized(t, e, cfg)
		h.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__echo","arguments":{"way":"` + way + `"}}}`)
		if m := h.Response(`2`); m.Error != nil || !strings.Contains(string(m.Result), `"way":"`+way+`"`) {
			t.Fatalf("call: %s", m.Encode())
		}
		checkHandedOff(t, e, p, way == "handoff")
	})
}

// checkHandedOff checks whether the daemon holds serve's stdin and stdout.
func checkHandedOff(t *testing.T, e *mcpxtest.Env, p *servePipes, want bool) {
	t.Helper()
	daemonFiles := openFiles(t, harness.DaemonPID(t, e))
	in, out := pipeID(t, p.cmd.Process.Pid, 0), pipeID(t, p.cmd.Process.Pid, 1)
	if held := daemonFiles[in] && daemonFiles[out]; held != want {
		t.Errorf("the daemon holds the host's pipes (%s, %s): %v, want %v", in, out, held, want)
	}
	// Serve reads the host's stdin through its poller when it forwards;
	// when the daemon has it, serve's poller must not watch it, or every
	// message would wake serve too.
	if polled := polledFiles(t, p.cmd.Process.Pid)[in]; polled == want {
		t.Errorf("serve's poller watches the host's stdin (%s): %v, want %v", in, polled, !want)
	}
}

// polledFiles returns what the epoll instances of process pid watch, as
// openFiles names pipes ("pipe:[inode]"), from /proc/<pid>/fdinfo.
func polledFiles(t *testing.T, pid int) map[string]bool {
	t.Helper()
	links, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	files := map[string]bool{}
	for _, l := range links {
		if s, err := os.Readlink(l); err != nil || s != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(strings.Replace(l, "/fd/", "/fdinfo/", 1))
		if err != nil {
			continue // closed since
		}
		for line := range strings.Lines(string(info)) {
			_, hex, ok := strings.Cut(line, " ino:")
			if !strings.HasPrefix(line, "tfd:") || !ok {
				continue
			}
			hex, _, _ = strings.Cut(hex, " ")
			ino, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", l, line, err)
			}
			files[fmt.Sprintf("pipe:[%d]", ino)] = true
		}
	}
	if len(files) == 0 {
		t.Fatalf("process %d: no epoll instance watches anything", pid)
	}
	return files
}

// TestDaemonStopsMidMessage: the daemon stops (`mcpx stop`) while it has
// read only the start of the host's next request. The call in flight is
// answered as stopping; the request, finished after the stop, is served
// by the next daemon: on a stop, nothing the host sent is lost, whichever
// process had read it. (A daemon killed after reading part of a request
// loses that part.)
func TestDaemonStopsMidMessage(t *testing.T) {
	t.Parallel()
	forEachWay(t, func(t *testing.T, way string, e *mcpxtest.Env, cfg string) {
		p, h := startInitialized(t, e, cfg)
		h.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":30},"_meta":{"` + harness.MarkerKey + `":"midstop"}}}`)
		harness.UpstreamRequest(e, "demo", "midstop")

		next := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__echo","arguments":{"after":"stop"}}}` + "\n"
		if _, err := p.in.WriteString(next[:40]); err != nil {
			t.Fatal(err)
		}
		waitBuffered(t, p.in, "the start of a request", func(n int) bool { return n == 0 })
		if stdout, stderr, code := e.Run(harness.WaitLong, "stop", "--config", cfg); code != 0 {
			t.Fatalf("mcpx stop exited %d: %s%s", code, stdout, stderr)
		}
		if m := h.Response(`2`); m.Error == nil || m.Error.Code != harness.CodeStopping {
			t.Errorf("the call in flight: %s, want error %d", m.Encode(), harness.CodeStopping)
		}
		if _, err := p.in.WriteString(next[40:]); err != nil {
			t.Fatal(err)
		}
		if m := h.Response(`3`); m.Error != nil || !strings.Contains(string(m.Result), `"after":"stop"`) {
			t.Fatalf("the request finished after the stop: %s", m.Encode())
		}
		checkHandedOff(t, e, p, way == "handoff") // to the next daemon too
		h.Mu.Lock()
		defer h.Mu.Unlock()
		for _, m := range h.Recv {
			if m.IsResponse() && m.ID.String() != "1" && m.ID.String() != "2" && m.ID.String() != "3" {
				t.Errorf("a response to a request the host never sent: %s", m.Encode())
			}
		}
	})
}

// TestDaemonKilledMidLine: the daemon dies in the middle of writing a
// large result to a host that reads slowly. Serve ends the broken line
// before answering, so the host sees one malformed line and then the
// error for that same request, and goes on.
func TestDaemonKilledMidLine(t *testing.T) {
	t.Parallel()
	// Alone, the answer is written by the call's own goroutine
	// (WriteNow); with another call in flight, by the host's writer,
	// which blocks in the middle of the line.
	t.Run("alone", func(t *testing.T) { testDaemonKilledMidLine(t, false) })
	t.Run("beside-another", func(t *testing.T) { testDaemonKilledMidLine(t, true) })
}

func testDaemonKilledMidLine(t *testing.T, beside bool) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	p := startServePipes(t, e, cfg)
	r := bufio.NewReaderSize(p.out, 1<<20)
	readLine := func() []byte {
		t.Helper()
		_ = p.out.SetReadDeadline(time.Now().Add(harness.WaitLong))
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading from mcpx serve: %v (after %q)", err, line)
		}
		return line
	}
	if _, err := p.in.WriteString(harness.InitializeLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if m, err := jsonrpc.Decode(readLine()); err != nil || m.ID.String() != "1" {
		t.Fatalf("initialize: %v %v", m, err)
	}
	want := map[string]bool{"7": true} // the requests the kill leaves unanswered
	if beside {
		if _, err := p.in.WriteString(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":30},"_meta":{"` + harness.MarkerKey + `":"beside"}}}` + "\n"); err != nil {
			t.Fatal(err)
		}
		harness.UpstreamRequest(e, "demo", "beside")
		want["6"] = true
	}
	pad := strings.Repeat("x", 1<<20)
	if _, err := p.in.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo__echo","arguments":{"pad":"` + pad + `"}}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	// The result is twice the pad: it fills the pipe, and the daemon
	// waits in the middle of the line.
	size, err := pipeCtl(p.out, func(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0) })
	if err != nil {
		t.Fatal(err)
	}
	waitBuffered(t, p.out, "a full pipe", func(n int) bool { return n == size })
	pid := harness.DaemonPID(t, e)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	broken := readLine()
	if len(broken) < size || json.Valid(broken) || !bytes.HasPrefix(broken, []byte(`{"jsonrpc":"2.0","id":7,"result":`)) {
		t.Fatalf("first line: %d bytes, valid JSON %v, starts %.60q; want the start of the result, ended", len(broken), json.Valid(broken), broken)
	}
	for n := len(want); n > 0; n-- {
		m, err := jsonrpc.Decode(readLine())
		if err != nil || !want[m.ID.String()] || m.Error == nil || m.Error.Code != -31000 {
			t.Fatalf("after the broken line: %v, %v; want -31000 for one of %v", m, err, want)
		}
		delete(want, m.ID.String())
	}
	if _, err := p.in.WriteString(`{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := jsonrpc.Decode(readLine())
		if err != nil {
			t.Fatal(err)
		}
		if m.IsResponse() {
			if m.ID.String() != "8" || m.Error != nil {
				t.Fatalf("after reconnecting: %s, want the ping's result", m.Encode())
			}
			break
		}
	}
	checkHandedOff(t, e, p, true) // to the next daemon
}

// TestDaemonDiesWithManyCallsUnderServe: more calls in flight than the
// handoff table holds (the rest go to serve as events) when the daemon is
// killed: every one is answered, once.
func TestDaemonDiesWithManyCallsUnderServe(t *testing.T) {
	const calls = 300
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"maxConcurrentCalls": calls, "maxCallsPerHost": calls}, mcpxtest.Demo{Name: "demo"})
	p, h := startInitialized(t, e, cfg)
	var batch strings.Builder
	for i := range calls {
		// Long string ids, some too long for the table.
		id := fmt.Sprintf(`"call-%d-%s"`, i, strings.Repeat("i", i%80))
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"demo__wait","arguments":{"seconds":30},"_meta":{"%s":"many-%d"}}}`+"\n", id, harness.MarkerKey, i)
	}
	if _, err := p.in.WriteString(batch.String()); err != nil {
		t.Fatal(err)
	}
	// Every call reached the upstream, so the daemon read them all.
	e.WaitRecord("demo", harness.WaitLong, func(demo.Event) bool {
		n := 0
		for _, ev := range e.Records("demo") {
			if ev.Method == "tools/call" {
				n++
			}
		}
		return n == calls
	})
	if err := syscall.Kill(harness.DaemonPID(t, e), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := range calls {
		id := fmt.Sprintf(`"call-%d-%s"`, i, strings.Repeat("i", i%80))
		if m := h.Response(id); m.Error == nil || m.Error.Code != -31000 {
			t.Fatalf("call %s: %s, want -31000", id, m.Encode())
		}
	}
	h.Mu.Lock()
	defer h.Mu.Unlock()
	seen := map[string]bool{}
	for _, m := range h.Recv {
		if m.IsResponse() {
			if seen[m.ID.String()] {
				t.Errorf("answered twice: %s", m.ID)
			}
			seen[m.ID.String()] = true
		}
	}
}
