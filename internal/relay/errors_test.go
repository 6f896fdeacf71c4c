package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

func TestRPCError(t *testing.T) {
	upstreamErr := &jsonrpc.Error{Code: -32000, Message: "tool blew up", Data: json.RawMessage(`{"x": 1}`)}
	exit := &upstream.ExitError{Server: "demo", Status: "exit status 3", Stderr: "panic: oops"}
	tests := []struct {
		name    string
		err     error
		server  string
		code    int64
		message string
		data    string // "" for none
		kind    string
	}{
		{
			name: "upstream error unchanged", err: upstreamErr, server: "demo",
			code: -32000, message: "tool blew up", data: `{"x": 1}`, kind: "upstream_error",
		},
		{
			name: "wrapped upstream error unchanged", err: fmt.Errorf("calling: %w", upstreamErr), server: "demo",
			code: -32000, message: "tool blew up", data: `{"x": 1}`, kind: "upstream_error",
		},
		{
			name: "idle timeout", err: &Cause{Kind: IdleTimeout, After: 30 * time.Second}, server: "demo",
			code: mcp.CodeTimeout, message: "mcpx: idle timeout: no progress for 30s",
			data: `{"mcpx":{"kind":"idle_timeout","server":"demo","afterMs":30000}}`, kind: "idle_timeout",
		},
		{
			name: "hard timeout", err: fmt.Errorf("x: %w", &Cause{Kind: HardTimeout, After: 1500 * time.Millisecond}), server: "demo",
			code: mcp.CodeTimeout, message: "mcpx: hard maximum of 1.5s reached",
			data: `{"mcpx":{"kind":"hard_timeout","server":"demo","afterMs":1500}}`, kind: "hard_timeout",
		},
		{
			name: "user interrupt", err: &Cause{Kind: UserInterrupt}, server: "demo",
			code: mcp.CodeInterrupted, message: "mcpx: interrupted by user",
			data: `{"mcpx":{"kind":"user_interrupt","server":"demo"}}`, kind: "user_interrupt",
		},
		{
			name: "stopping", err: &Cause{Kind: Stopping}, server: "demo",
			code: mcp.CodeStopping, message: "mcpx: mcpx is stopping",
			data: `{"mcpx":{"kind":"stopping","server":"demo"}}`, kind: "stopping",
		},
		{
			name: "pool closed", err: upstream.ErrClosed, server: "demo",
			code: mcp.CodeStopping, message: "mcpx: mcpx is stopping",
			data: `{"mcpx":{"kind":"stopping","server":"demo"}}`, kind: "stopping",
		},
		{
			name: "pool closed, wrapped", err: fmt.Errorf("starting demo: %w", upstream.ErrClosed), server: "",
			code: mcp.CodeStopping, message: "mcpx: mcpx is stopping",
			data: `{"mcpx":{"kind":"stopping"}}`, kind: "stopping",
		},
		{
			name: "host cancelled", err: &Cause{Kind: HostCancelled, Detail: "bye"}, server: "demo",
			code: mcp.CodeInterrupted, message: "mcpx: cancelled by the host: bye",
			data: `{"mcpx":{"kind":"host_cancelled","server":"demo"}}`, kind: "host_cancelled",
		},
		{
			name: "host disconnected", err: &Cause{Kind: HostDisconnected}, server: "demo",
			code: mcp.CodeInterrupted, message: "mcpx: the host disconnected",
			data: `{"mcpx":{"kind":"host_disconnected","server":"demo"}}`, kind: "host_disconnected",
		},
		{
			name: "client disconnected", err: &Cause{Kind: ClientDisconnected}, server: "demo",
			code: mcp.CodeInterrupted, message: "mcpx: the client disconnected",
			data: `{"mcpx":{"kind":"client_disconnected","server":"demo"}}`, kind: "client_disconnected",
		},
		{
			name: "upstream exited", err: fmt.Errorf("call: %w", exit), server: "asked",
			code: mcp.CodeUpstreamFailed, message: `mcpx: upstream "demo" exited (exit status 3); its last stderr: panic: oops`,
			data: `{"mcpx":{"kind":"upstream_exited","server":"demo","status":"exit status 3"}}`, kind: "upstream_exited",
		},
		{
			name: "unknown server", err: fmt.Errorf("%w %q", upstream.ErrUnknownServer, "nope"), server: "nope",
			code: jsonrpc.CodeInvalidParams, message: `Unknown tool: unknown server "nope"`, kind: "unknown_tool",
		},
		{
			name: "plain error", err: errors.New("dial tcp: connection refused"), server: "demo",
			code: mcp.CodeUpstreamFailed, message: "mcpx: dial tcp: connection refused",
			data: `{"mcpx":{"kind":"upstream_failed","server":"demo"}}`, kind: "upstream_failed",
		},
		{
			name: "plain error, no server", err: errors.New("boom"), server: "",
			code: mcp.CodeUpstreamFailed, message: "mcpx: boom",
			data: `{"mcpx":{"kind":"upstream_failed"}}`, kind: "upstream_failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kind := RPCError(tt.err, tt.server)
			if got == nil {
				t.Fatal("RPCError returned nil")
			}
			if got.Code != tt.code {
				t.Errorf("code: got %d, want %d", got.Code, tt.code)
			}
			if got.Message != tt.message {
				t.Errorf("message: got %q, want %q", got.Message, tt.message)
			}
			if kind != tt.kind {
				t.Errorf("kind: got %q, want %q", kind, tt.kind)
			}
			if tt.data == "" {
				if len(got.Data) != 0 {
					t.Errorf("data: got %s, want none", got.Data)
				}
				return
			}
			if diff := cmp.Diff(decodeJSON(t, tt.data), decodeJSON(t, string(got.Data))); diff != "" {
				t.Errorf("data mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRPCErrorKeepsUpstreamPointer(t *testing.T) {
	upstreamErr := &jsonrpc.Error{Code: 5, Message: "m"}
	if got, _ := RPCError(fmt.Errorf("a: %w", upstreamErr), "s"); got != upstreamErr {
		t.Errorf("got %p, want the upstream's own error %p", got, upstreamErr)
	}
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

func TestTimeouts(t *testing.T) {
	cfg := &config.Config{
		IdleTimeout: time.Hour, MaxTimeout: 2 * time.Hour, // globals do not apply directly
		Servers: map[string]*config.Server{
			"both": {Name: "both", Transport: config.TransportStdio, IdleTimeout: time.Minute, MaxTimeout: 10 * time.Minute},
			"none": {Name: "none", Transport: config.TransportStdio},
			"idle": {Name: "idle", Transport: config.TransportStdio, IdleTimeout: 30 * time.Second},
		},
	}
	r := New(cfg, nil, NewRegistry(), nil)
	tests := []struct {
		server            string
		idle, max         time.Duration
		wantIdle, wantMax time.Duration
	}{
		{"both", 0, 0, time.Minute, 10 * time.Minute},                          // no wish: the configured ones
		{"both", 10 * time.Second, 0, 10 * time.Second, 10 * time.Minute},      // shorter wins
		{"both", time.Hour, 20 * time.Minute, time.Minute, 10 * time.Minute},   // never longer
		{"both", 0, 5 * time.Minute, time.Minute, 5 * time.Minute},             // max only
		{"both", time.Minute, 10 * time.Minute, time.Minute, 10 * time.Minute}, // equal
		{"both", -time.Second, -time.Second, time.Minute, 10 * time.Minute},    // negative: no wish
		{"none", 0, 0, 0, 0}, // zero: no timer
		{"none", 5 * time.Second, time.Hour, 5 * time.Second, time.Hour},          // a wish where none is configured
		{"idle", 0, 0, 30 * time.Second, 0},                                       // one of two configured
		{"idle", time.Minute, 2 * time.Second, 30 * time.Second, 2 * time.Second}, // mixed
		{"unknown", 0, 0, 0, 0},
		{"unknown", time.Second, time.Minute, time.Second, time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v/%v", tt.server, tt.idle, tt.max), func(t *testing.T) {
			idle, max := r.Timeouts(tt.server, tt.idle, tt.max)
			if idle != tt.wantIdle || max != tt.wantMax {
				t.Errorf("Timeouts(%q, %v, %v) = %v, %v; want %v, %v", tt.server, tt.idle, tt.max, idle, max, tt.wantIdle, tt.wantMax)
			}
		})
	}
}
