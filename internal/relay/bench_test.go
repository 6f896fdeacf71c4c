package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// The relay's hot paths: one tools/call through Relay.CallTool to the demo
// fixture (a child process: this test binary, re-executed), a progress
// burst through it, and the per-notification work of a call's progress.
// No host face: see internal/hostserver's benchmarks for that.
//
//	go test -run '^$' -bench . -benchmem ./internal/relay/

// benchUpstreamEnv makes this test binary serve the demo on stdio.
const benchUpstreamEnv = "MCPX_RELAY_BENCH_UPSTREAM"

func init() {
	if os.Getenv(benchUpstreamEnv) == "1" {
		_ = demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	}
}

// benchRelay is a Relay over a pool with one stdio upstream, demo, started.
func benchRelay(b *testing.B) *Relay {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": exe, "env": map[string]string{benchUpstreamEnv: "1"}},
	}})
	cfg, err := config.Parse(doc, "bench.json", nil)
	if err != nil {
		b.Fatal(err)
	}
	pool := upstream.NewPool(cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	r := New(cfg, pool, NewRegistry(), nil)
	if _, err := benchEcho(r, 0); err != nil {
		b.Fatal(err)
	}
	return r
}

// benchEcho relays one echo call with arguments {"n":n}.
func benchEcho(r *Relay, n int64) (json.RawMessage, error) {
	params, _ := jsonrpc.ParseObject([]byte(`{"name":"demo__echo","arguments":{"n":` + strconv.FormatInt(n, 10) + `}}`))
	return r.CallTool(context.Background(), nil, Call{Server: "demo", Tool: "echo", Params: params})
}

// cpuTime is this process's user+system CPU time so far: the relay's (and
// the benchmark's), not the fixture's (a child process).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallTool relays one call at a time.
func BenchmarkCallTool(b *testing.B) {
	echoLoop(b, benchRelay(b))
}

// echoLoop relays one echo call at a time, each checked, for b's loop,
// reporting allocations and CPU time per call; it returns the calls made.
func echoLoop(b *testing.B, r *Relay) int64 {
	b.ReportAllocs()
	var n int64
	cpu := cpuTime()
	for b.Loop() {
		n++
		res, err := benchEcho(r, n)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(res, []byte(`{"n":`+strconv.FormatInt(n, 10)+`}`)) {
			b.Fatalf("echo %d answered %s", n, res)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	return n
}

// BenchmarkCallToolProgress relays one burst: 200 progress notifications,
// each handed on with the host's token, then the result.
func BenchmarkCallToolProgress(b *testing.B) {
	const count = 200
	r := benchRelay(b)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		got := 0
		params, _ := jsonrpc.ParseObject([]byte(`{"name":"demo__burst","arguments":{"count":` + strconv.Itoa(count) + `}}`))
		_, err := r.CallTool(context.Background(), nil, Call{
			Server: "demo", Tool: "burst", Params: params,
			HostToken: json.RawMessage(`"host-token"`),
			Progress:  func(json.RawMessage) { got++ },
		})
		if err != nil {
			b.Fatal(err)
		}
		if got != count {
			b.Fatalf("%d progress notifications relayed, want %d", got, count)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/notification")
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkOnProgress is the relay's work on one progress notification
// (the upstream reader's part, without the framing): read its value, reset
// the idle timer, restore the host's token.
func BenchmarkOnProgress(b *testing.B) {
	params := []byte(`{"progressToken":"mcpx-42","progress":17,"total":200,"message":"step 17"}`)
	c := &Call{HostToken: json.RawMessage(`"p-42"`), Progress: func(json.RawMessage) {}}
	t := newCallTimer(2*time.Hour, func(error) {})
	defer t.stop()
	t.startIdle(time.Hour)
	st := &callState{call: c, entry: &Entry{}, idle: time.Hour, timer: t}
	var v float64
	b.ReportAllocs()
	for b.Loop() {
		v++ // values must increase to be relayed
		params = strconv.AppendFloat(params[:len(`{"progressToken":"mcpx-42","progress":`)], v, 'f', -1, 64)
		params = append(params, `,"total":200,"message":"step 17"}`...)
		st.onProgress(params)
	}
}

// BenchmarkRegistry registers and removes one host request.
func BenchmarkRegistry(b *testing.B) {
	g := NewRegistry()
	cancel := func(error) {}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n++
		e, err := g.Add(HostKey{Session: "host-1", ID: strconv.Itoa(n)}, "tools/call", cancel)
		if err != nil {
			b.Fatal(err)
		}
		g.Remove(e)
	}
}
