package hostserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/bridge"
	"mcpx/internal/catalog"
	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// The hot paths of mcpx's host face, in this process: a host on a
// net.Pipe (what `mcpx serve --in-process` serves on stdio) or on HTTP,
// relaying to the demo fixture, which runs as a child process (this test
// binary, re-executed). Allocations are counted in this process: the
// bench host's and mcpx's, not the fixture's.
//
//	go test -run '^$' -bench . -benchmem ./internal/hostserver/
//	go test -run '^$' -bench 'Relay(Call|Progress)$' -cpuprofile cpu.out ./internal/hostserver/

// benchUpstreamEnv makes this test binary serve the demo on stdio.
const benchUpstreamEnv = "MCPX_HOSTSERVER_BENCH_UPSTREAM"

func init() {
	switch os.Getenv(benchUpstreamEnv) {
	case "1":
		_ = demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	case "http":
		// Serves the demo on HTTP until stdin closes; the first line out
		// is "listening on URL".
		_ = demo.ServeHTTP(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	}
}

// benchServer is a Server over a pool with one stdio upstream, demo.
func benchServer(b *testing.B) *Server {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return benchServerFor(b, map[string]any{"command": exe, "env": map[string]string{benchUpstreamEnv: "1"}})
}

// benchServerHTTPUpstream is a Server over a pool with one HTTP upstream,
// demo, served by a child process (this test binary, re-executed), so that
// the fixture's CPU is not this process's.
func benchServerHTTPUpstream(b *testing.B) *Server {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), benchUpstreamEnv+"=http")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stdin.Close()
		_ = cmd.Wait()
		b.Fatalf("demo on HTTP: %v", err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() }) // after the pool has stopped (cleanups run last first)
	url := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	return benchServerFor(b, map[string]any{"url": url})
}

func benchServerFor(b *testing.B, server map[string]any) *Server {
	b.Helper()
	return benchServerOpts(b, server, nil, nil)
}

// benchServerOpts is benchServerFor with the Server's options and the
// config's mcpx.hosts; with opts.Jobs set to a placeholder, a job manager
// over a SQLite store in a temporary directory, run until cleanup.
func benchServerOpts(b testing.TB, server map[string]any, opts *Options, hosts map[string]any) *Server {
	b.Helper()
	top := map[string]any{"mcpServers": map[string]any{"demo": server}}
	if hosts != nil {
		top["mcpx"] = map[string]any{"hosts": hosts}
	}
	doc, _ := json.Marshal(top)
	cfg, err := config.Parse(doc, "bench.json", nil)
	if err != nil {
		b.Fatal(err)
	}
	pool := upstream.NewPool(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	r := relay.New(cfg, pool, relay.NewRegistry(), nil)
	r.SetBridge(bridge.New(r, nil)) // as the daemon wires it
	if opts != nil && opts.Jobs != nil {
		opts.Jobs = benchJobs(b, r)
	}
	return New(r, catalog.New(pool, catalog.Naming{Prefix: "always", Separator: "__"}, nil), opts)
}

// pipeHost is a raw JSON-RPC host on one end of a net.Pipe served by
// ServeConn. It is safe for concurrent use.
type pipeHost struct {
	conn net.Conn
	wmu  sync.Mutex
	ids  atomic.Int64
	seq  atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan []byte
	progress map[int64]*atomic.Int64

	// meta, for a 2026-07-28 host, is the _meta member its requests
	// carry (with a comma before it); "" for a legacy host.
	meta string
}

// modernMeta is the _meta stamp of a 2026-07-28 bench host's requests.
const modernMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// newPipeHost is a legacy host: it initializes with 2025-11-25.
func newPipeHost(b *testing.B, s *Server) *pipeHost {
	b.Helper()
	return newPipeHostEra(b, s, false)
}

// newPipeHostEra is a legacy host, or with modern a 2026-07-28 host: no
// initialize, and every request stamped.
func newPipeHostEra(b *testing.B, s *Server, modern bool) *pipeHost {
	b.Helper()
	hostEnd, srvEnd := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeConn(context.Background(), srvEnd) }()
	h := &pipeHost{conn: hostEnd, pending: map[int64]chan []byte{}, progress: map[int64]*atomic.Int64{}}
	readDone := make(chan struct{})
	go func() { defer close(readDone); h.read() }()
	b.Cleanup(func() {
		hostEnd.Close()
		<-readDone
		if err := <-served; err != nil {
			b.Errorf("ServeConn: %v", err)
		}
	})
	if modern {
		h.meta = modernMeta
	} else {
		if _, err := h.call(`"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`, nil); err != nil {
			b.Fatal(err)
		}
		h.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	if err := h.echo(); err != nil { // starts the upstream
		b.Fatal(err)
	}
	return h
}

func (h *pipeHost) write(line []byte) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, _ = h.conn.Write(append(line, '\n'))
}

func (h *pipeHost) read() {
	r := jsonrpc.NewReader(h.conn, 0)
	for {
		line, err := r.ReadLine()
		if err != nil {
			h.mu.Lock()
			for id, ch := range h.pending {
				close(ch)
				delete(h.pending, id)
			}
			h.mu.Unlock()
			return
		}
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method":"notifications/progress"`)) {
			// The bench's tokens are the request ids: "progressToken":N.
			i := bytes.Index(line, []byte(`"progressToken":`))
			if i < 0 {
				continue
			}
			rest := line[i+len(`"progressToken":`):]
			j := bytes.IndexAny(rest, ",}")
			id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
			if err != nil {
				continue
			}
			h.mu.Lock()
			n := h.progress[id]
			h.mu.Unlock()
			if n != nil {
				n.Add(1)
			}
			continue
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil || !msg.IsResponse() {
			continue
		}
		id, _ := msg.ID.Int()
		h.mu.Lock()
		ch := h.pending[id]
		delete(h.pending, id)
		h.mu.Unlock()
		if ch != nil {
			ch <- append([]byte(nil), line...)
		}
	}
}

// call sends a request (its members after the id) and waits for the
// response line. With progress, its progress notifications are counted.
func (h *pipeHost) call(rest string, progress *atomic.Int64) ([]byte, error) {
	id := h.ids.Add(1)
	ch := make(chan []byte, 1)
	h.mu.Lock()
	h.pending[id] = ch
	if progress != nil {
		h.progress[id] = progress
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.progress, id)
		h.mu.Unlock()
	}()
	h.write([]byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + "," + strings.ReplaceAll(rest, "$ID", strconv.FormatInt(id, 10)) + "}"))
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, io.ErrClosedPipe
		}
		return line, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("no response to %d within 30s", id)
	}
}

// echo calls demo__echo with distinct arguments and checks the result.
func (h *pipeHost) echo() error {
	args := `{"n":` + strconv.FormatInt(h.seq.Add(1), 10) + `}`
	line, err := h.call(`"method":"tools/call","params":{"name":"demo__echo","arguments":`+args+h.meta+`}`, nil)
	if err != nil {
		return err
	}
	if !bytes.Contains(line, []byte(args)) {
		return fmt.Errorf("echo %s answered %s", args, line)
	}
	return nil
}

// cpuTime is this process's user+system CPU time so far: mcpx's and the
// bench host's, not the fixture's (a child process).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start: steadier than ns/op
// on a shared machine.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkRelayCall is one tools/call relayed to the fixture's echo, one
// at a time: host stream in, upstream stdio out and back.
func BenchmarkRelayCall(b *testing.B) {
	benchEchoes(b, newPipeHost(b, benchServer(b)))
}

// benchEchoes makes echo calls one at a time as h.
func benchEchoes(b *testing.B, h *pipeHost) {
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := h.echo(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkRelayCallParallel keeps 32 calls in flight on one host stream.
func BenchmarkRelayCallParallel(b *testing.B) {
	benchParallel(b, false)
}

// BenchmarkRelayCallModern is BenchmarkRelayCall from a 2026-07-28 host:
// no initialize, each request stamped in its _meta.
func BenchmarkRelayCallModern(b *testing.B) {
	benchEchoes(b, newPipeHostEra(b, benchServer(b), true))
}

// BenchmarkRelayCallParallelModern is BenchmarkRelayCallParallel from a
// 2026-07-28 host.
func BenchmarkRelayCallParallelModern(b *testing.B) {
	benchParallel(b, true)
}

// benchParallel keeps 32 echo calls in flight on one host stream.
func benchParallel(b *testing.B, modern bool) {
	h := newPipeHostEra(b, benchServer(b), modern)
	b.ReportAllocs()
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	cpu := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := h.echo(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu)
}

// BenchmarkRelayProgress is one call of the fixture's burst tool: 200
// progress notifications relayed (token swapped back to the host's) and
// then the result. Every notification must arrive before the result.
func BenchmarkRelayProgress(b *testing.B) {
	const count = 200
	h := newPipeHost(b, benchServer(b))
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var got atomic.Int64
		if _, err := h.call(`"method":"tools/call","params":{"name":"demo__burst","arguments":{"count":`+strconv.Itoa(count)+`},"_meta":{"progressToken":$ID}}`, &got); err != nil {
			b.Fatal(err)
		}
		if n := got.Load(); n != count {
			b.Fatalf("%d progress notifications before the result, want %d", n, count)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/notification")
	reportCPU(b, cpu)
}

// BenchmarkIdleHost measures what one idle, initialized host connection
// keeps in memory: heap (after a GC) and goroutine stacks, per host, over
// 100 hosts. The daemon's RSS per idle host (go run ./bench) adds the
// socket and the local API's share.
func BenchmarkIdleHost(b *testing.B) {
	const hosts = 100
	s := benchServer(b)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		type conn struct {
			end    net.Conn
			served chan error
		}
		var conns []conn
		for range hosts {
			hostEnd, srvEnd := net.Pipe()
			c := conn{hostEnd, make(chan error, 1)}
			go func() { c.served <- s.ServeConn(context.Background(), srvEnd) }()
			// Read the answers here, a byte at a time: a host-side reader
			// (and its buffer) would count too.
			answer := func(id string) {
				var line []byte
				for !bytes.Contains(line, []byte(`"id":`+id+`,`)) && !bytes.Contains(line, []byte(`"id":`+id+`}`)) {
					line = line[:0]
					for one := [1]byte{}; one[0] != '\n'; line = append(line, one[0]) {
						if _, err := hostEnd.Read(one[:]); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			_, _ = hostEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
			answer("1")
			_, _ = hostEnd.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			// Its ping answered, the host's session has handled what came
			// before: it is idle.
			_, _ = hostEnd.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
			answer("2")
			conns = append(conns, c)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		stack := float64(after.StackInuse) - float64(before.StackInuse)
		b.ReportMetric(heap/hosts, "heap-B/host")
		b.ReportMetric(stack/hosts, "stack-B/host")
		for _, c := range conns {
			c.end.Close()
			if err := <-c.served; err != nil {
				b.Fatal(err)
			}
		}
	}
}
