package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/daemon"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// The per-call overhead of mcpx: one tools/call of the demo's echo tool,
// with small distinct arguments each time, made by the same raw JSON-RPC
// host over a direct stdio connection to a demo process ("direct") and
// through mcpx running in this process on a net.Pipe, relaying to a demo
// process of its own ("mcpx"). Both upstreams are the same binary with the
// same flags, and the host speaks 2025-11-25 to both. Allocations are
// counted in this process: the host's in both cases, plus mcpx's relay in
// the mcpx case, so the difference is what mcpx allocates per call.
//
//	go test -run '^$' -bench Call -benchmem ./internal/e2e/

// BenchmarkCall makes one call at a time.
func BenchmarkCall(b *testing.B) {
	direct, viaMcpx := benchHosts(b)
	for _, h := range []*benchHost{direct, viaMcpx} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.echo(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchInFlight is how many calls BenchmarkCallParallel keeps in flight.
const benchInFlight = 16

// BenchmarkCallParallel keeps about benchInFlight calls in flight
// (b.RunParallel goroutines, rounded to a multiple of GOMAXPROCS).
func BenchmarkCallParallel(b *testing.B) {
	direct, viaMcpx := benchHosts(b)
	p := max(1, benchInFlight/runtime.GOMAXPROCS(0))
	for _, h := range []*benchHost{direct, viaMcpx} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(p)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := h.echo(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(p*runtime.GOMAXPROCS(0)), "inflight")
		})
	}
}

// benchHosts starts both hosts, initialized and ready, and stops them at
// cleanup.
func benchHosts(b *testing.B) (direct, viaMcpx *benchHost) {
	b.Helper()
	e := mcpxtest.NewEnv(b)
	upstreamArgs := []string{"demo"}

	// direct: the demo as a child process on stdin and stdout.
	cmd := exec.Command(e.Bin, upstreamArgs...)
	cmd.Stderr = os.Stderr
	stdin, stdout := harness.StartPiped(b, cmd)
	direct = newBenchHost(b, "direct", "echo", stdout, stdin, func() error {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			return errors.New("the demo did not exit within 10s of its stdin closing")
		}
	})

	// mcpx: the gateway in this process, its host end on a pipe.
	cfgPath := e.Path("bench.json")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": e.Bin, "args": upstreamArgs},
	}})
	if err := os.WriteFile(cfgPath, doc, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := e.LoadConfig(cfgPath)
	hostEnd, mcpxEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		served <- daemon.ServeStdio(ctx, &daemon.Options{Config: cfg, Version: "bench", Logger: log}, mcpxEnd)
	}()
	viaMcpx = newBenchHost(b, "mcpx", "demo__echo", hostEnd, hostEnd, func() error {
		hostEnd.Close()
		defer cancel()
		select {
		case err := <-served:
			return err
		case <-time.After(15 * time.Second):
			cancel()
			<-served
			return errors.New("mcpx did not return within 15s of the host leaving")
		}
	})
	return direct, viaMcpx
}

// benchHost is a raw JSON-RPC host: calls from many goroutines, answers
// matched by id. It is safe for concurrent use.
type benchHost struct {
	name, tool string
	w          io.Writer
	wmu        sync.Mutex
	ids        atomic.Int64 // request ids
	seq        atomic.Int64 // echo arguments
	readerDone chan struct{}

	mu      sync.Mutex
	pending map[int64]chan *jsonrpc.Message // guarded by mu
	readErr error                           // guarded by mu
}

func newBenchHost(b *testing.B, name, tool string, r io.Reader, w io.Writer, stop func() error) *benchHost {
	b.Helper()
	h := &benchHost{name: name, tool: tool, w: w, readerDone: make(chan struct{}), pending: map[int64]chan *jsonrpc.Message{}}
	go h.read(r)
	b.Cleanup(func() {
		if err := stop(); err != nil {
			b.Errorf("%s: stopping: %v", name, err)
		}
		<-h.readerDone
	})
	res, err := h.call("initialize", []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`))
	if err != nil {
		b.Fatalf("%s: initialize: %v", name, err)
	}
	if !bytes.Contains(res, []byte(`"protocolVersion":"2025-11-25"`)) {
		b.Fatalf("%s: initialize answered %s", name, res)
	}
	h.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	// The first call starts mcpx's upstream; keep it out of the timing.
	if err := h.echo(); err != nil {
		b.Fatal(err)
	}
	return h
}

func (h *benchHost) read(r io.Reader) {
	defer close(h.readerDone)
	jr := jsonrpc.NewReader(r, 0)
	for {
		line, err := jr.ReadLine()
		if err != nil {
			h.fail(fmt.Errorf("reading: %w", err))
			return
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil {
			h.fail(fmt.Errorf("malformed message %q: %w", line, err))
			return
		}
		if !msg.IsResponse() {
			continue
		}
		id, _ := msg.ID.Int()
		h.mu.Lock()
		ch := h.pending[id]
		delete(h.pending, id)
		h.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
}

// fail ends every pending call with err.
func (h *benchHost) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readErr = err
	for id, ch := range h.pending {
		close(ch)
		delete(h.pending, id)
	}
}

func (h *benchHost) write(line []byte) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.w.Write(append(line, '\n'))
}

// call sends a request and waits, at most 30s, for its response.
func (h *benchHost) call(method string, params []byte) (json.RawMessage, error) {
	id := h.ids.Add(1)
	ch := make(chan *jsonrpc.Message, 1)
	h.mu.Lock()
	if h.readErr != nil {
		h.mu.Unlock()
		return nil, h.readErr
	}
	h.pending[id] = ch
	h.mu.Unlock()
	line := make([]byte, 0, 128+len(params))
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"method":"`...)
	line = append(line, method...)
	line = append(line, `","params":`...)
	line = append(line, params...)
	line = append(line, '}')
	h.write(line)
	select {
	case msg, ok := <-ch:
		if !ok {
			h.mu.Lock()
			defer h.mu.Unlock()
			return nil, h.readErr
		}
		if msg.Error != nil {
			return nil, msg.Error
		}
		return msg.Result, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("no response to %s %d within 30s", method, id)
	}
}

// echo calls the echo tool with arguments {"n":N}, N distinct per call,
// and checks that the result carries them.
func (h *benchHost) echo() error {
	n := h.seq.Add(1)
	args := strconv.AppendInt([]byte(`{"n":`), n, 10)
	args = append(args, '}')
	params := make([]byte, 0, 64)
	params = append(params, `{"name":"`...)
	params = append(params, h.tool...)
	params = append(params, `","arguments":`...)
	params = append(params, args...)
	params = append(params, '}')
	res, err := h.call("tools/call", params)
	if err != nil {
		return fmt.Errorf("%s: tools/call: %w", h.name, err)
	}
	if !bytes.Contains(res, args) {
		return fmt.Errorf("%s: echo %s answered %s", h.name, args, res)
	}
	return nil
}
