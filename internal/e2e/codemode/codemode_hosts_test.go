package codemode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestCodeModeHeartbeats: a host whose timer progress resets hears from a
// silent script every third of its timer, under its token, with values
// that always increase.
func TestCodeModeHeartbeats(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{"mcpx-e2e-gosdk": map[string]any{"timeout": "300ms", "resetOnProgress": true}}},
			mcpxtest.Demo{Name: "demo"})
		prog := harness.NewProgressLog()
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", prog)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{
			"code": `progress(1, 10, "started"); await sleep(1000); progress(1, 10, "again"); return 1`},
			Meta: mcp.Meta{"progressToken": "beats"}})
		if err != nil || harness.ScriptText(res) != "1" {
			t.Fatalf("%v %s", err, harness.ScriptText(res))
		}
		// A heartbeat may come before "started" when the script's child
		// starts slowly: the host's timer runs from its request.
		notes := prog.Of("beats")
		beats, started := 0, false
		prev := 0.0
		for i, n := range notes {
			if i > 0 && n.Progress <= prev {
				t.Errorf("progress %v after %v", n.Progress, prev)
			}
			prev = n.Progress
			switch {
			case n.Message == "started":
				started = true
			case started && strings.HasPrefix(n.Message, "waiting on script host-"):
				beats++
			}
		}
		if !started || beats < 2 {
			t.Errorf("%d heartbeats after \"started\" (seen: %v) in %d notifications, want 2 or more", beats, started, len(notes))
		}
	})
}

// TestCodeModeHTTP: a go-sdk host over Streamable HTTP, legacy and
// 2026-07-28, runs a script and gets its progress; a cancel of a script
// there cancels its inner calls upstream.
func TestCodeModeHTTP(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			e := mcpxtest.NewEnv(t)
			m := harness.StartHTTP(t, e, mcpxtest.Daemon, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}), false)
			prog := harness.NewProgressLog()
			cs := harness.ConnectGoSDKHTTP(t, m, version, prog)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{
				"code": `progress(1, 2, "half"); const r = await tools.demo.echo({ n: 9 }); return { n: r.n }`},
				Meta: mcp.Meta{"progressToken": "http-script"}})
			if err != nil || res.IsError || harness.ScriptText(res) != `{"n":9}` {
				t.Fatalf("%v %s", err, harness.ScriptText(res))
			}
			if n := prog.Wait(t, "http-script", 1, 10*time.Second); n[0].Progress != 1 {
				t.Errorf("progress %+v", n[0])
			}
			callCtx, cancelCall := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{
					"code": `await Promise.all([1, 2, 3].map(() => tools.demo.wait({ seconds: 30 })))`}})
			}()
			deadline := time.Now().Add(20 * time.Second)
			for countTool(e.Records("demo"), "request", "wait") < 3 {
				if time.Now().After(deadline) {
					t.Fatal("the inner calls did not start")
				}
				time.Sleep(5 * time.Millisecond)
			}
			cancelCall()
			<-done
			for len(cancels(e.Records("demo"))) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("%d upstream cancels, want 3", len(cancels(e.Records("demo"))))
				}
				time.Sleep(5 * time.Millisecond)
			}
			for _, ev := range cancels(e.Records("demo")) {
				if !strings.Contains(ev.Reason, "stopped: cancelled by the host") {
					t.Errorf("upstream cancel reason %q", ev.Reason)
				}
			}
		})
	}
}
