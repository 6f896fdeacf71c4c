package harness

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/localclient"
	"mcpx/internal/mcpxtest"
)

// LoadHost is a raw JSON-RPC host that keeps, per call, every response
// and when the first came.
type LoadHost struct {
	t        *testing.T
	w        io.Writer
	wmu      sync.Mutex
	Leave    func() // ends the host's side, waits for the stream's end
	readDone chan struct{}

	Mu        sync.Mutex
	Sent      map[int]time.Time
	Responses map[int][]*jsonrpc.Message
	Answered  map[int]time.Time
	Progress  int
	Late      []string // progress after its call's response
	initDone  chan struct{}
}

func NewLoadHost(t *testing.T, r io.Reader, w io.Writer, leave func()) *LoadHost {
	h := &LoadHost{t: t, w: w, Leave: leave, readDone: make(chan struct{}), initDone: make(chan struct{}),
		Sent: map[int]time.Time{}, Responses: map[int][]*jsonrpc.Message{}, Answered: map[int]time.Time{}}
	go h.read(r)
	return h
}

func (h *LoadHost) Write(line []byte) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if _, err := h.w.Write(append(line, '\n')); err != nil {
		h.t.Errorf("writing to mcpx: %v", err)
	}
}

func (h *LoadHost) read(r io.Reader) {
	defer close(h.readDone)
	jr := jsonrpc.NewReader(r, 64<<20)
	for {
		line, err := jr.ReadLine()
		if err != nil {
			return
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil {
			h.t.Errorf("mcpx sent a malformed message %q: %v", line, err)
			continue
		}
		now := time.Now()
		switch {
		case msg.IsResponse() && msg.ID.String() == `"init"`:
			close(h.initDone)
		case msg.IsResponse():
			k, _ := msg.ID.Int()
			h.Mu.Lock()
			if len(h.Responses[int(k)]) == 0 {
				h.Answered[int(k)] = now
			}
			h.Responses[int(k)] = append(h.Responses[int(k)], msg)
			h.Mu.Unlock()
		case msg.Method == "notifications/progress":
			var p struct {
				Token string `json:"progressToken"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			k, _ := strconv.Atoi(strings.TrimPrefix(p.Token, "p"))
			h.Mu.Lock()
			h.Progress++
			if len(h.Responses[k]) > 0 {
				h.Late = append(h.Late, string(line))
			}
			h.Mu.Unlock()
		}
	}
}

func (h *LoadHost) Initialize() {
	h.Write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`))
	select {
	case <-h.initDone:
	case <-time.After(WaitLong):
		h.t.Fatal("no answer to initialize")
	}
	h.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
}

// Call sends one request with id k and waits for its answer (warm-up).
func (h *LoadHost) Call(k int, line []byte) *jsonrpc.Message {
	h.Write(line)
	deadline := time.Now().Add(WaitLong)
	for time.Now().Before(deadline) {
		h.Mu.Lock()
		rs := h.Responses[k]
		h.Mu.Unlock()
		if len(rs) > 0 {
			return rs[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("no answer to warm-up request %d", k)
	return nil
}

// LoadGateway is mcpx under load: how to connect a host, and how to see it.
type LoadGateway struct {
	Connect func() *LoadHost
	Status  func() *apitype.Status
	Stop    func() // in-process: stops the daemon and waits for it
}

// InProcessGateway runs daemon.Run in the test process.
func InProcessGateway(t *testing.T, e *mcpxtest.Env, cfgPath string) LoadGateway {
	cfg := e.LoadConfig(cfgPath)
	paths, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		t.Fatal(err)
	}
	files := paths.Daemon(cfg.File, "load-test")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, &daemon.Options{Config: cfg, Version: "test", Logger: log, Files: files})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon.Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the in-process daemon did not stop within 30s")
		}
	}
	t.Cleanup(stop)
	client := &localclient.Client{Socket: files.Socket, Version: "test"}
	status := func() *apitype.Status {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := client.Status(ctx)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		return st
	}
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := client.Status(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the in-process daemon did not answer within 15s: %v", err)
		}
	}
	connect := func() *LoadHost {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := client.DialHost(ctx)
		if err != nil {
			t.Fatalf("connecting a host: %v", err)
		}
		var h *LoadHost
		h = NewLoadHost(t, s, s, func() {
			_ = s.CloseWrite()
			select {
			case <-h.readDone:
			case <-time.After(WaitLong):
				t.Errorf("mcpx did not end a host's stream within %v of the host leaving", WaitLong)
			}
			s.Close()
		})
		return h
	}
	return LoadGateway{Connect: connect, Status: status, Stop: stop}
}

// DaemonGateway makes every host an `mcpx serve` process.
func DaemonGateway(t *testing.T, e *mcpxtest.Env, cfgPath string) LoadGateway {
	connect := func() *LoadHost {
		cmd := exec.Command(e.Bin, "serve", "--config", cfgPath, "--log-level", "warn")
		cmd.Env = e.Environ()
		cmd.Stderr = os.Stderr
		stdin, stdout := StartPiped(t, cmd)
		var h *LoadHost
		h = NewLoadHost(t, stdout, stdin, func() {
			stdin.Close()
			waited := make(chan error, 1)
			go func() { <-h.readDone; waited <- cmd.Wait() }()
			select {
			case <-waited:
			case <-time.After(WaitLong):
				cmd.Process.Kill()
				<-waited
				t.Errorf("mcpx serve did not exit within %v of its stdin closing", WaitLong)
			}
		})
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
			}
		})
		return h
	}
	status := func() *apitype.Status {
		st := StatusJSON(t, e, cfgPath)
		return &st
	}
	return LoadGateway{Connect: connect, Status: status}
}
