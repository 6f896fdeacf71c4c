package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"mcpx/internal/mcpxtest"
)

// FixtureEnv names the misbehaving upstream the test binary plays when it
// is re-executed as one. These are upstreams the demo cannot be: one that
// stops reading its stdin, one whose progress repeats its value.
const FixtureEnv = "MCPX_E2E_FIXTURE"

// FixtureServer returns a config server entry running fixture name.
func FixtureServer(name string, fields map[string]any) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	srv := map[string]any{
		"command": exe,
		"args":    []string{"-test.run=^$"},
		"env":     map[string]string{FixtureEnv: name, "GORACE": mcpxtest.RaceQuickExit},
	}
	for k, v := range fields {
		srv[k] = v
	}
	return srv
}

// RunFixture serves fixture name on stdio, a legacy (2025-11-25) server
// with one tool, "work". It returns the exit code.
func RunFixture(name string) int {
	grown := false // "changing": its tool list grows at the first call
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := json.NewEncoder(os.Stdout)
	var sendMu sync.Mutex // chaos fixtures answer from goroutines
	send := func(v any) { sendMu.Lock(); defer sendMu.Unlock(); _ = out.Encode(v) }
	ChaosStart(name)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue // notifications
		}
		if msg.Method == "" {
			AskerAnswered(line) // a response to a question of the asker's
			continue
		}
		reply := func(result any) {
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
		switch msg.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fixture-" + name, "version": "1"}})
		case "tools/list":
			tools := []any{map[string]any{"name": "work", "inputSchema": map[string]any{"type": "object"}}}
			if grown {
				tools = append(tools, map[string]any{"name": "more", "inputSchema": map[string]any{"type": "object"}})
			}
			reply(map[string]any{"tools": tools})
		case "tools/call":
			if ChaosCall(name, msg.Params.Meta.Token, msg.Params.Arguments, send, reply) {
				continue // fixture_chaos.go
			}
			switch name {
			case "changing":
				// A new tool appears: say so, then answer.
				grown = true
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "grew"}}})
			case "deaf":
				// Stop reading stdin for good: mcpx's writes pile up in the
				// pipe and then block, unless mcpx never blocks on them.
				time.Sleep(time.Hour)
			case "heartbeat":
				// Progress whose value repeats (and once goes back) every
				// 100ms for 1.2s: alive, but not increasing.
				values := []float64{1, 1, 1, 2, 2, 1, 2, 2, 2, 3, 3, 3}
				for _, v := range values {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
						"params": map[string]any{"progressToken": msg.Params.Meta.Token, "progress": v, "message": fmt.Sprint("beat ", v)}})
					time.Sleep(100 * time.Millisecond)
				}
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
			}
		case "ping":
			reply(map[string]any{})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}
