package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// A tool call through the relay with its bridge, as the daemon wires
// them, to the demo fixture (this test binary, re-executed): what the
// bridge adds to a call that needs no bridging. internal/relay's
// benchmarks measure the plain call.
//
//	go test -run '^$' -bench . -benchmem ./internal/bridge/

// benchUpstreamEnv makes this test binary serve the demo on stdio.
const benchUpstreamEnv = "MCPX_BRIDGE_BENCH_UPSTREAM"

func init() {
	if os.Getenv(benchUpstreamEnv) == "1" {
		_ = demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	}
}

// benchRelay is a bridged Relay over a pool with one stdio upstream,
// demo, started.
func benchRelay(b *testing.B) *relay.Relay {
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
	r := relay.New(cfg, pool, relay.NewRegistry(), nil)
	r.SetBridge(New(r, nil))
	if _, err := benchEcho(r, 0); err != nil { // the upstream starts
		b.Fatal(err)
	}
	return r
}

// benchEcho relays one echo call with arguments {"n":n}.
func benchEcho(r *relay.Relay, n int64) (json.RawMessage, error) {
	params, _ := jsonrpc.ParseObject([]byte(`{"name":"demo__echo","arguments":{"n":` + strconv.FormatInt(n, 10) + `}}`))
	return r.CallTool(context.Background(), nil, relay.Call{Server: "demo", Tool: "echo", Params: params})
}

// BenchmarkCallTool relays one echo call at a time, each checked: the
// path of internal/relay's BenchmarkCallTool, bridged.
func BenchmarkCallTool(b *testing.B) {
	r := benchRelay(b)
	b.ReportAllocs()
	var n int64
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
}
