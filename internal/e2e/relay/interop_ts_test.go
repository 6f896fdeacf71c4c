package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// The TypeScript SDK v1 host (test/interop/v1host.mjs) against mcpx against
// @modelcontextprotocol/server-everything, behind a wire tap
// (test/interop/tap.mjs) that logs what mcpx and the upstream exchange.
const (
	tsServer     = "everything"
	tsLongTool   = "trigger-long-running-operation"
	tsExposed    = tsServer + "__" + tsLongTool
	tsDuration   = 3  // seconds the long operation lasts
	tsSteps      = 10 // its progress notifications, one every 300 ms
	tsTimeoutMs  = 1200
	tsSettleMs   = 3500 // after an abort, listen past the operation's end
	tsHostReason = "the host gave up after the first progress"
)

// TestTSv1Host runs each scenario of v1host.mjs in each mode and judges its
// report and the upstream's wire.
func TestTSv1Host(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	for _, sc := range []struct {
		name  string
		check func(t *testing.T, r *v1Report, tap *harness.TapLog)
	}{
		{"list", checkTSList},
		{"long", checkTSLong},
		{"abort", checkTSAbort},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				r, tap := runV1Host(t, node, interop, everything, mode, sc.name)
				sc.check(t, r, tap)
			})
		})
	}
}

// v1Report is what v1host.mjs prints.
type v1Report struct {
	Scenario      string          `json:"scenario"`
	OK            bool            `json:"ok"`
	Error         string          `json:"error"`
	T0Epoch       float64         `json:"t0Epoch"`
	MCPXPid       int             `json:"mcpxPid"`
	ServerVersion json.RawMessage `json:"serverVersion"`
	Tools         []string        `json:"tools"`
	LongSchema    struct {
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"longToolSchema"`
	Call   *v1Call `json:"call"`
	Errors []struct {
		At      float64 `json:"at"`
		Message string  `json:"message"`
	} `json:"errors"`
	CloseError string  `json:"closeError"`
	CloseMs    float64 `json:"closeMs"`
}

type v1Call struct {
	RequestID     json.RawMessage `json:"requestId"`
	ProgressToken json.RawMessage `json:"progressToken"`
	ElapsedMs     float64         `json:"elapsedMs"`
	Result        *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	OnProgress []v1Progress `json:"onprogress"`
	Wire       struct {
		Progress  []v1Progress `json:"progress"`
		Responses []struct {
			At    float64         `json:"at"`
			Index int             `json:"index"`
			Error json.RawMessage `json:"error"`
		} `json:"responses"`
	} `json:"wire"`
	// abort
	StartedAt            float64      `json:"startedAt"`
	AbortedAt            *float64     `json:"abortedAt"`
	Resolved             bool         `json:"resolved"`
	RejectError          string       `json:"error"`
	SettledAt            float64      `json:"settledAt"`
	ProgressAfterAbort   []v1Progress `json:"progressAfterAbort"`
	OnProgressAfterAbort []v1Progress `json:"onprogressAfterAbort"`
	ListenedUntil        float64      `json:"listenedUntil"`
	CancelSent           *struct {
		At     float64 `json:"at"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	} `json:"cancelSent"`
}

type v1Progress struct {
	At       float64 `json:"at"`
	Index    int     `json:"index"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
}

// runV1Host writes a config whose only server is server-everything behind
// the tap, runs v1host.mjs with scenario in mode, and returns its report
// and the tap's log. At cleanup it checks that mcpx serve, the tap and the
// upstream have all exited.
func runV1Host(t *testing.T, node, interop, everything string, mode mcpxtest.Mode, scenario string) (*v1Report, *harness.TapLog) {
	t.Helper()
	var pids []int
	// Registered before NewEnv, so it runs after the daemon is stopped.
	t.Cleanup(func() { checkProcsExited(t, pids) })
	e := mcpxtest.NewEnv(t)
	tapPath := e.Path("tap-" + tsServer + ".jsonl")
	cfg := map[string]any{"mcpServers": map[string]any{
		tsServer: map[string]any{
			"command": node,
			"args":    []string{filepath.Join(interop, "tap.mjs"), tapPath, "--", node, everything, "stdio"},
		},
	}}
	cfgPath := e.Path("config.json") // where the Env's cleanup looks for the daemon to stop
	harness.TsWriteJSON(t, cfgPath, cfg)

	env := maps.Clone(e.Vars)
	k, v := "GORACE", mcpxtest.RaceQuickExit
	env[k] = v
	spec := map[string]any{
		"mcpx": e.Bin, "config": cfgPath, "inProcess": mode == mcpxtest.InProcess, "env": env,
		"scenario": scenario, "tool": tsExposed, "duration": tsDuration, "steps": tsSteps,
		"timeoutMs": tsTimeoutMs, "abortReason": tsHostReason, "settleMs": tsSettleMs, "deadlineMs": 90_000,
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "v1host.mjs"), string(specJSON))
	cmd.Dir = interop
	cmd.Env = e.Environ()
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if s := stderr.String(); s != "" {
		t.Logf("v1host stderr (mcpx's included):\n%s", s)
	}
	tap := harness.ReadTapLog(t, tapPath)
	pids = append(pids, tap.Pids...)
	var r v1Report
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("v1host (%v) printed no report: %v\nstdout:\n%s", runErr, err, stdout.String())
	}
	if r.MCPXPid > 0 {
		pids = append(pids, r.MCPXPid)
	}
	if runErr != nil {
		t.Fatalf("v1host: %v; report: %s", runErr, out)
	}
	if !r.OK {
		t.Fatalf("v1host scenario %s failed: %s\nreport: %s", scenario, r.Error, out)
	}
	if r.CloseError != "" {
		t.Errorf("closing the client: %s", r.CloseError)
	}
	// The SDK closes stdin, then waits 2 s before SIGTERM: mcpx serve must
	// exit on its own before that. In process, mcpx serve also stops its
	// upstreams, and server-everything, told that mcpx relays roots, does
	// not always exit when its stdin closes (its own doing: it handles
	// only SIGINT), so mcpx may wait out its 2 s stop grace before
	// SIGTERM; that is allowed there, and nothing longer.
	limit := 2000.0
	if mode == mcpxtest.InProcess {
		limit = 4500
	}
	if r.CloseMs >= limit {
		t.Errorf("mcpx serve took %.0f ms to exit after its stdin closed; the SDK sent SIGTERM", r.CloseMs)
	} else if r.CloseMs >= 2000 {
		t.Logf("mcpx serve took %.0f ms to exit: it waited out the stop grace of an upstream that ignored the end of its stdin", r.CloseMs)
	}
	t.Logf("report: %s", out)
	return &r, tap
}

func checkTSList(t *testing.T, r *v1Report, _ *harness.TapLog) {
	for _, want := range []string{tsServer + "__echo", tsExposed, "mcpx_search", "mcpx_call"} {
		if !slices.Contains(r.Tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, r.Tools)
		}
	}
	for _, name := range r.Tools {
		if !strings.HasPrefix(name, tsServer+"__") && !strings.HasPrefix(name, "mcpx_") {
			t.Errorf("tool %q is neither prefixed %q nor a meta-tool", name, tsServer+"__")
		}
	}
	for _, p := range []string{"duration", "steps"} {
		if _, ok := r.LongSchema.Properties[p]; !ok {
			t.Errorf("%s's inputSchema has no property %q: %v", tsExposed, p, r.LongSchema.Properties)
		}
	}
	if len(r.ServerVersion) == 0 || string(r.ServerVersion) == "null" {
		t.Errorf("no serverInfo")
	}
}

// checkTSLong: a 3 s call with a 1.2 s timeout reset on progress succeeds,
// and every progress notification reaches the host before the result.
func checkTSLong(t *testing.T, r *v1Report, tap *harness.TapLog) {
	c := r.Call
	if c == nil || c.Result == nil {
		t.Fatalf("no call result in the report")
	}
	wantText := fmt.Sprintf("Long running operation completed. Duration: %d seconds, Steps: %d.", tsDuration, tsSteps)
	if c.Result.IsError || len(c.Result.Content) != 1 || c.Result.Content[0].Text != wantText {
		t.Errorf("result %+v, want the text %q", c.Result, wantText)
	}
	// Longer than two timeouts: only progress resetting the timeout let it succeed.
	if c.ElapsedMs < 2*tsTimeoutMs+100 || c.ElapsedMs > 30_000 {
		t.Errorf("elapsed %.0f ms, want about %d s", c.ElapsedMs, tsDuration)
	}
	if len(c.Wire.Responses) != 1 {
		t.Fatalf("%d responses to the call on the wire, want 1", len(c.Wire.Responses))
	}
	resp := c.Wire.Responses[0]
	if len(c.Wire.Progress) != tsSteps {
		t.Errorf("%d progress notifications on the host's wire, want %d: %+v", len(c.Wire.Progress), tsSteps, c.Wire.Progress)
	}
	prevAt := 0.0
	for i, p := range c.Wire.Progress {
		if p.Progress != float64(i+1) || p.Total != tsSteps || p.Index > resp.Index {
			t.Errorf("wire progress #%d = %+v (response at index %d)", i, p, resp.Index)
		}
		if i > 0 && p.At-prevAt >= tsTimeoutMs {
			t.Errorf("%.0f ms between progress %d and %d, not less than the %d ms timeout", p.At-prevAt, i, i+1, tsTimeoutMs)
		}
		prevAt = p.At
	}
	// SDK v1 dispatches notifications on a microtask but the response
	// synchronously: a progress notification read together with the result
	// may miss onprogress (and be reported as "unknown token"). The wire
	// check above is the strict one.
	if n := len(c.OnProgress); n < tsSteps-1 || n > tsSteps {
		t.Errorf("onprogress ran %d times, want %d (or %d)", n, tsSteps, tsSteps-1)
	}
	for i, p := range c.OnProgress {
		if p.Progress != float64(i+1) || p.Total != tsSteps {
			t.Errorf("onprogress #%d = %+v", i, p)
		}
	}
	for _, e := range r.Errors {
		t.Logf("client error at %.0f ms: %s", e.At, e.Message)
	}
	// Upstream side: mcpx asked for progress with a token of its own, and
	// the upstream sent as many as the host got.
	up := tap.Call(t, tsLongTool)
	if len(up.Token) == 0 {
		t.Errorf("mcpx's tools/call upstream has no progress token: %s", up.Line)
	}
	if n := len(tap.Progress(up.Token, "out")); n != tsSteps {
		t.Errorf("the upstream sent %d progress notifications, want %d", n, tsSteps)
	}
	t.Logf("long: %.0f ms, %d progress on the wire before the result, %d via onprogress", c.ElapsedMs, len(c.Wire.Progress), len(c.OnProgress))
}

// checkTSAbort: aborting on the first progress rejects the call, mcpx
// cancels its upstream call with its own id and a reason naming the host's
// cancellation, and nothing more for the call reaches the host, although
// server-everything keeps sending progress.
func checkTSAbort(t *testing.T, r *v1Report, tap *harness.TapLog) {
	c := r.Call
	if c == nil || c.AbortedAt == nil {
		t.Fatalf("the call was never aborted: %+v", c)
	}
	if c.Resolved || !strings.Contains(c.RejectError, tsHostReason) {
		t.Errorf("the aborted call: resolved %v, error %q; want a rejection with the abort reason", c.Resolved, c.RejectError)
	}
	if c.CancelSent == nil || string(c.CancelSent.Params.RequestID) != string(c.RequestID) || c.CancelSent.Params.Reason != tsHostReason {
		t.Fatalf("the SDK's cancellation %+v, want requestId %s and reason %q", c.CancelSent, c.RequestID, tsHostReason)
	}
	if len(c.OnProgress) != 1 {
		t.Errorf("onprogress ran %d times, want once (the abort)", len(c.OnProgress))
	}
	if len(c.ProgressAfterAbort) != 0 || len(c.OnProgressAfterAbort) != 0 {
		t.Errorf("progress reached the host after its cancellation: wire %+v, onprogress %+v", c.ProgressAfterAbort, c.OnProgressAfterAbort)
	}
	if len(c.Wire.Responses) != 0 {
		t.Errorf("the cancelled call got a response: %+v", c.Wire.Responses)
	}
	if c.ListenedUntil-*c.AbortedAt < tsSettleMs {
		t.Errorf("listened only %.0f ms after the abort", c.ListenedUntil-*c.AbortedAt)
	}

	up := tap.Call(t, tsLongTool)
	cancels := tap.Cancels(up.Id)
	if len(cancels) != 1 {
		t.Fatalf("mcpx sent %d cancellations of its upstream call %s, want 1; tap log:\n%s", len(cancels), up.Id, tap.Raw)
	}
	cn := cancels[0]
	if want := "cancelled by the host: " + tsHostReason; cn.Reason != want {
		t.Errorf("upstream cancellation reason %q, want %q", cn.Reason, want)
	}
	for _, other := range tap.CancelsAll() {
		if string(other.RequestID) != string(up.Id) {
			t.Errorf("mcpx cancelled an upstream request it did not mean to: %s", other.Line)
		}
	}
	hostAbort := r.T0Epoch + *c.AbortedAt
	t.Logf("abort: host abort → upstream notifications/cancelled: %.1f ms (ms clocks); upstream id %s, host id %s", cn.At-hostAbort, up.Id, c.RequestID)
	// server-everything ignores cancellation: its later progress shows that
	// mcpx dropped what the host did not get.
	late := 0
	for _, p := range tap.Progress(up.Token, "out") {
		if p.At > cn.At {
			late++
		}
	}
	if late == 0 {
		t.Errorf("the upstream sent no progress after mcpx's cancellation: the test no longer shows mcpx dropping late progress")
	}
	t.Logf("abort: the upstream sent %d progress notifications after the cancel; the host received %d", late, len(c.ProgressAfterAbort))
}

// checkProcsExited fails the test unless every pid has exited within 10 s.
func checkProcsExited(t *testing.T, pids []int) {
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for harness.ProcAlive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d (%s) is still running after the test", pid, procCmdline(pid))
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func procCmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}
