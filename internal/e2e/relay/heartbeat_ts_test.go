package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// Heartbeats behind real TypeScript SDK hosts whose timer progress resets
// (test/interop/timerhost.mjs), scaled down: a 2 s timer, reset on
// progress, against the demo's silent wait of five times that (the call
// lives on only by heartbeats over several of the timer's periods).
const (
	hbTimer       = 2 * time.Second
	hbWork        = 5 * hbTimer
	hbResetHost   = "mcpx-timerhost-reset"   // the config says: 2 s, reset on progress
	hbUnawareHost = "mcpx-timerhost-unaware" // the config says: no timer (wrongly)
)

// timerHostReport is what timerhost.mjs prints.
type timerHostReport struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	CallError string  `json:"callError"`
	ElapsedMs float64 `json:"elapsedMs"`
	Progress  []struct {
		At       float64  `json:"at"`
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total"`
		Message  string   `json:"message"`
	} `json:"progress"`
}

// TestHeartbeatTSHosts: a TypeScript SDK host (v1 over initialize, v2
// pinned to 2026-07-28, each over stdio and HTTP) whose 2 s timer progress
// resets calls a tool that works for 10 s without a word. Its profile,
// from the config's mcpx.hosts under the clientInfo.name it sends, says
// so: mcpx sends it heartbeats and the call completes; the upstream runs
// it once. The same host under a name whose profile says it has no timer
// gets no heartbeats, and its timer fires at 2 s: without them the call
// is lost. In daemon mode over stdio, status shows the host with the
// profile it got while the call runs.
func TestHeartbeatTSHosts(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	for _, sdk := range []string{"v1", "v2"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(sdk+"-"+transport, func(t *testing.T) {
				t.Parallel() // each run mostly waits on the silent tool
				mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
					e := mcpxtest.NewEnv(t)
					cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
						hbResetHost:   map[string]any{"timeout": hbTimer.String(), "resetOnProgress": true},
						hbUnawareHost: map[string]any{"timeout": 0},
					}}, mcpxtest.Demo{Name: "demo"})
					spec := map[string]any{
						"sdk": sdk, "transport": transport, "tool": "demo__wait",
						"arguments": map[string]any{"seconds": hbWork.Seconds()}, "timeoutMs": hbTimer.Milliseconds(),
						"deadlineMs": 80_000,
					}
					harness.ReachMcpx(t, e, mode, transport, cfg, spec)

					spec["clientName"] = hbResetHost
					var statusSeen func() *apitype.ConnectedHost
					if transport == "stdio" && mode == mcpxtest.Daemon {
						statusSeen = watchStatus(t, e, cfg, hbResetHost)
					}
					r := runTimerHost(t, node, interop, e, spec)
					checkHeartbeats(t, r)
					beats, took := len(r.Progress), r.ElapsedMs
					if n, c := waitCalls(e); n != 1 || c != 0 {
						t.Errorf("the upstream ran %d wait calls and got %d cancellations, want 1 and 0", n, c)
					}
					if statusSeen != nil {
						h := statusSeen()
						want := apitype.HostProfile{Name: hbResetHost, TimeoutMs: hbTimer.Milliseconds(), ResetOnProgress: true, Source: "config"}
						if h == nil || h.Profile != want {
							t.Errorf("status showed the host as %+v, want profile %+v", h, want)
						}
					}

					// The control: the same host, with a profile that says
					// it has no timer, gets no heartbeats and loses the call.
					spec["clientName"] = hbUnawareHost
					r = runTimerHost(t, node, interop, e, spec)
					if r.Result != nil || !strings.Contains(r.CallError, "timed out") || len(r.Progress) != 0 {
						t.Errorf("without heartbeats: result %+v, error %q, progress %+v; want the host's timeout and no progress", r.Result, r.CallError, r.Progress)
					}
					if r.ElapsedMs > float64(hbWork.Milliseconds())/2 {
						t.Errorf("without heartbeats the call lasted %.0f ms, want about the host's %v", r.ElapsedMs, hbTimer)
					}
					// (Whether the upstream hears of it depends on the host:
					// a legacy HTTP host that times out leaves without a
					// cancel, and the call runs on.)
					if n, _ := waitCalls(e); n != 2 {
						t.Errorf("the upstream ran %d wait calls for the two hosts, want 2", n)
					}
					t.Logf("%s %s %s: %d heartbeats over %.0f ms; without them the host gave up after %.0f ms", sdk, transport, mode, beats, took, r.ElapsedMs)
				})
			})
		}
	}
}

// checkHeartbeats judges a host's run behind heartbeats: the call
// completed after five times the host's timer, and the host heard from
// mcpx more often than its timer, in increasing values, each saying what
// mcpx waits on.
func checkHeartbeats(t *testing.T, r *timerHostReport) {
	t.Helper()
	if r.CallError != "" || r.Result == nil || r.Result.IsError || len(r.Result.Content) != 1 ||
		r.Result.Content[0].Text != fmt.Sprintf("waited %g seconds", hbWork.Seconds()) {
		t.Fatalf("the call: result %+v, error %q; want the tool's result", r.Result, r.CallError)
	}
	if r.ElapsedMs < float64(hbWork.Milliseconds()) {
		t.Errorf("the call took %.0f ms, less than the tool's %v", r.ElapsedMs, hbWork)
	}
	if min := int(hbWork / hbTimer); len(r.Progress) < min {
		t.Errorf("%d heartbeats in %v, want at least %d", len(r.Progress), hbWork, min)
	}
	prevAt, prev := 0.0, -1.0
	for i, p := range r.Progress {
		if !strings.HasPrefix(p.Message, "waiting on demo__wait: no news for ") {
			t.Errorf("heartbeat %d says %q", i, p.Message)
		}
		if i > 0 && p.Progress <= prev {
			t.Errorf("heartbeat %d: value %v after %v", i, p.Progress, prev)
		}
		if gap := p.At - prevAt; i > 0 && gap >= float64(hbTimer.Milliseconds()) {
			t.Errorf("%.0f ms without progress before heartbeat %d: the host's timer is %v", gap, i, hbTimer)
		}
		prevAt, prev = p.At, p.Progress
	}
}

// waitCalls counts the demo's wait requests and known cancellations.
func waitCalls(e *mcpxtest.Env) (calls, cancels int) {
	for _, ev := range e.Records("demo") {
		switch {
		case ev.Event == demo.EventRequest && ev.Tool == "wait":
			calls++
		case ev.Event == demo.EventCancelled && ev.Tool == "wait" && ev.Known != nil && *ev.Known:
			cancels++
		}
	}
	return calls, cancels
}

// watchStatus polls `mcpx status --json` until it shows a host named
// client, and returns a func that waits for the poller and returns what
// status showed of the host (nil if it never did, within 30 s).
func watchStatus(t *testing.T, e *mcpxtest.Env, cfg, client string) func() *apitype.ConnectedHost {
	var (
		wg    sync.WaitGroup
		found *apitype.ConnectedHost
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			out, _, code := e.Run(10*time.Second, "status", "--config", cfg, "--json")
			if code != 0 {
				continue
			}
			var st apitype.Status
			if json.Unmarshal([]byte(out), &st) != nil {
				continue
			}
			for _, h := range st.Connected {
				if h.Client == client {
					found = &h
					return
				}
			}
		}
	}()
	return func() *apitype.ConnectedHost { wg.Wait(); return found }
}

func runTimerHost(t *testing.T, node, interop string, e *mcpxtest.Env, spec map[string]any) *timerHostReport {
	t.Helper()
	out, stderr, err := harness.RunHostScript(t, e, node, interop, "timerhost.mjs", spec)
	var r timerHostReport
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("timerhost.mjs (%v) printed no report: %v\nstdout: %s\nstderr: %s", err, jerr, out, stderr)
	}
	if err != nil || !r.OK {
		t.Fatalf("timerhost.mjs: %v %s\nstderr: %s", err, r.Error, stderr)
	}
	return &r
}
