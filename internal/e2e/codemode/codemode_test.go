package codemode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestCodeModeGoSDK: a go-sdk host runs scripts through mcpx_exec: the
// script API, progress under the host's token, TypeScript, no ambient
// authority, a timeout that stops a busy loop, a memory bomb stopped by
// name while the gateway serves the next script, and mcpx_describe.
func TestCodeModeGoSDK(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		prog := harness.NewProgressLog()
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", prog)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()

		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var execDesc string
		names := map[string]bool{}
		for _, tl := range tools.Tools {
			names[tl.Name] = true
			if tl.Name == "mcpx_exec" {
				execDesc = tl.Description
			}
		}
		if !strings.Contains(execDesc, "tools.demo") || !names["mcpx_describe"] || !names["demo__echo"] {
			t.Errorf("tools/list: %v; mcpx_exec's description %q", names, execDesc)
		}

		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": `
			type Echo = { n: number };
			const echoed: Echo = await tools.demo.echo({ n: 7 });
			progress(1, 2, "echoed");
			const hits = await mcpx.search("export records");
			const whole = await mcpx.call("demo__echo", { n: 8 });
			let failed = "";
			try { await tools.demo.fail({}) } catch (e) { failed = e.message }
			console.log("found", hits.length);
			progress(2, 2);
			return { n: echoed.n, first: hits[0].call, whole: whole.structuredContent.n, failed };`},
			Meta: mcp.Meta{"progressToken": "script-progress"}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			N      int    `json:"n"`
			First  string `json:"first"`
			Whole  int    `json:"whole"`
			Failed string `json:"failed"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &got) != nil || res.IsError || got.N != 7 || got.First != "tools.demo.export" || got.Whole != 8 || !strings.HasPrefix(got.Failed, "demo.fail: ") {
			t.Errorf("script result %s: %s", b, harness.ScriptText(res))
		}
		if !strings.Contains(harness.ScriptText(res), "console:\nfound ") {
			t.Errorf("console not beside the result: %q", harness.ScriptText(res))
		}
		notes := prog.Wait(t, "script-progress", 1, 10*time.Second)
		if notes[0].Progress != 1 || notes[0].Total != 2 || notes[0].Message != "echoed" {
			t.Errorf("progress %+v", notes[0])
		}

		// No ambient authority.
		res = harness.ExecScript(t, ctx, cs, `return [typeof require, typeof fetch, typeof process, typeof Deno, typeof XMLHttpRequest].join(",")`, nil)
		if txt := harness.ScriptText(res); txt != `"undefined,undefined,undefined,undefined,undefined"` {
			t.Errorf("ambient authority: %s", txt)
		}

		// A busy loop ends at its own timeout, with a tool error that says so.
		start := time.Now()
		res = harness.ExecScript(t, ctx, cs, `while (true) {}`, map[string]any{"timeoutSeconds": 0.5})
		t.Logf("busy loop with a 500ms timeout answered after %v", time.Since(start))
		if txt := harness.ScriptText(res); !res.IsError || !strings.Contains(txt, "hard maximum of 500ms reached") {
			t.Errorf("busy loop past its timeout: %s", txt)
		}

		// A memory bomb fails naming the limit; the gateway serves on.
		start = time.Now()
		res = harness.ExecScript(t, ctx, cs, `let s = "x"; const keep = []; while (true) { s = s + s; keep.push(s + "y"); }`, nil)
		t.Logf("memory bomb answered after %v", time.Since(start))
		if txt := harness.ScriptText(res); !res.IsError || !strings.Contains(txt, "memory limit (256 MiB)") {
			t.Errorf("memory bomb: %s", txt)
		}
		res = harness.ExecScript(t, ctx, cs, `return (await tools.demo.echo({ n: 3 })).n`, nil)
		if txt := harness.ScriptText(res); txt != "3" {
			t.Errorf("after the memory bomb: %s", txt)
		}

		// mcpx_describe: declarations from the schemas.
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_describe", Arguments: map[string]any{"tools": []string{"demo__export", "nope"}}})
		if err != nil {
			t.Fatal(err)
		}
		if txt := harness.ScriptText(res); !strings.Contains(txt, "export(args: {") || !strings.Contains(txt, "Promise<{\n") || !strings.Contains(txt, "records: number;") || !strings.Contains(txt, "unknown (use mcpx_search): nope") {
			t.Errorf("mcpx_describe:\n%s", txt)
		}
		// The form mcpx call takes, server.tool, names the tool too.
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_describe", Arguments: map[string]any{"tools": []string{"demo.export"}}})
		if err != nil {
			t.Fatal(err)
		}
		if txt := harness.ScriptText(res); !strings.Contains(txt, "export(args: {") || strings.Contains(txt, "unknown") {
			t.Errorf("mcpx_describe of demo.export:\n%s", txt)
		}
	})
}

// TestCodeModeCancel: a host's cancel of a script with 8 inner calls in
// flight cancels each of them upstream, with a reason naming the script
// and the host's cancel; a busy loop stops at a host's cancel.
func TestCodeModeCancel(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		cs := harness.ConnectGoSDK(t, e, mode, cfg, "2025-11-25", harness.NewProgressLog())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		callCtx, cancelCall := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{
				"code": `await Promise.all(Array.from({ length: 8 }, () => tools.demo.wait({ seconds: 30 })))`}})
			done <- err
		}()
		deadline := time.Now().Add(20 * time.Second)
		for countTool(e.Records("demo"), demo.EventRequest, "wait") < 8 {
			if time.Now().After(deadline) {
				t.Fatalf("the demo saw %d wait calls, want 8", countTool(e.Records("demo"), demo.EventRequest, "wait"))
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancelAt := time.Now()
		cancelCall()
		<-done
		var last time.Time
		for time.Now().Before(deadline) {
			evs := cancels(e.Records("demo"))
			if len(evs) >= 8 {
				for _, ev := range evs {
					if !strings.Contains(ev.Reason, "script host-") || !strings.Contains(ev.Reason, "stopped: cancelled by the host") || ev.Known == nil || !*ev.Known {
						t.Errorf("upstream cancel %+v, want a known call and a reason naming the script and the host's cancel", ev)
					}
					if at, err := time.Parse(time.RFC3339Nano, ev.At); err == nil && at.After(last) {
						last = at
					}
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n := len(cancels(e.Records("demo"))); n != 8 {
			t.Fatalf("the demo received %d cancellations, want 8", n)
		}
		t.Logf("host cancel to the last of 8 upstream cancels: %v", last.Sub(cancelAt))

		// A busy loop stops at the host's cancel: its process ends.
		before := sandboxChildren(e.Bin)
		callCtx, cancelCall = context.WithCancel(ctx)
		go func() {
			_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": `while (true) {}`}})
			done <- err
		}()
		// Each step has its own bound: on a loaded machine the 8 calls
		// above may take most of theirs.
		deadline = time.Now().Add(20 * time.Second)
		var busy int
		for busy == 0 && time.Now().Before(deadline) {
			for pid, cpu := range sandboxChildren(e.Bin) {
				if cpu >= 20 && before[pid] < 20 { // 200ms of CPU: the loop
					busy = pid
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		if busy == 0 {
			t.Fatal("no script process spins")
		}
		cancelAt = time.Now()
		cancelCall()
		<-done
		deadline = time.Now().Add(20 * time.Second)
		for {
			if _, alive := sandboxChildren(e.Bin)[busy]; !alive {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the busy script's process %d still runs 20s after the host's cancel (CPU %d ticks)", busy, sandboxChildren(e.Bin)[busy])
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("host cancel to the busy script's process gone: %v", time.Since(cancelAt))
		res := harness.ExecScript(t, ctx, cs, `return 1`, nil)
		if txt := harness.ScriptText(res); txt != "1" {
			t.Errorf("after the cancels: %s", txt)
		}
	})
}

// TestCodeModeConfig: "codeMode": true leaves hosts the meta-tools alone.
func TestCodeModeConfig(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"codeMode": true}, mcpxtest.Demo{Name: "demo"})
	cs := harness.ConnectGoSDK(t, e, mcpxtest.Daemon, cfg, "2025-11-25", harness.NewProgressLog())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != strings.Join(harness.MetaToolNames, ",") { // jobs on: mcpx_job and mcpx_job_cancel too
		t.Errorf("tools in code mode: %v", names)
	}
	if txt := harness.ScriptText(harness.ExecScript(t, ctx, cs, `return (await tools.demo.echo({ n: 5 })).n`, nil)); txt != "5" {
		t.Errorf("a script in code mode: %s", txt)
	}
}

func countTool(evs []demo.Event, kind, tool string) int {
	n := 0
	for _, ev := range evs {
		if ev.Event == kind && ev.Tool == tool {
			n++
		}
	}
	return n
}

func cancels(evs []demo.Event) []demo.Event {
	var out []demo.Event
	for _, ev := range evs {
		if ev.Event == demo.EventCancelled {
			out = append(out, ev)
		}
	}
	return out
}

// sandboxChildren returns the script processes of the mcpx binary bin
// that are alive (not zombies), with their CPU time in clock ticks.
func sandboxChildren(bin string) map[int]int {
	out := map[int]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if exe, _ := os.Readlink(filepath.Join(d, "exe")); len(args) < 2 || exe != bin || args[1] != "sandbox-child" {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(f) < 13 || f[0] == "Z" {
			continue
		}
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		pid, _ := strconv.Atoi(filepath.Base(d))
		out[pid] = ut + st
	}
	return out
}

// TestCodeModeBadInput: each malformed mcpx_exec or mcpx_describe gets a
// tool error that says what is wrong, and the gateway serves on.
func TestCodeModeBadInput(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cs := harness.ConnectGoSDK(t, e, mcpxtest.InProcess, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}), "2025-11-25", harness.NewProgressLog())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"mcpx_exec", map[string]any{}, "mcpx_exec needs a script in code"},
		{"mcpx_exec", map[string]any{"code": 5}, "mcpx_exec: invalid arguments"},
		{"mcpx_exec", map[string]any{"code": "   "}, "mcpx_exec needs a script in code"},
		{"mcpx_exec", map[string]any{"code": "return ("}, "the script does not compile: unexpected end of the script"},
		{"mcpx_exec", map[string]any{"code": "const a = 1;\nreturn )"}, "the script does not compile: line 2, column 8: Unexpected \")\""},
		{"mcpx_exec", map[string]any{"code": "return await tools.nope.x({})"}, `nope.x: `},
		{"mcpx_exec", map[string]any{"code": "return await tools.demo.nope({})"}, `demo.nope: `},
		{"mcpx_exec", map[string]any{"code": "return await tools.demo.echo([1])"}, "must be an object"},
		{"mcpx_exec", map[string]any{"code": `return await mcpx.call("mcpx_exec", {code: "1"})`}, `unknown tool "mcpx_exec"`},
		{"mcpx_describe", map[string]any{}, "mcpx_describe needs tools"},
		{"mcpx_describe", map[string]any{"tools": "demo"}, "mcpx_describe needs tools"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, err)
		}
		if txt := harness.ScriptText(res); !res.IsError || !strings.Contains(txt, tc.want) {
			t.Errorf("%s %v: %q (isError %v), want an error containing %q", tc.tool, tc.args, txt, res.IsError, tc.want)
		}
	}
	if txt := harness.ScriptText(harness.ExecScript(t, ctx, cs, `return 2`, nil)); txt != "2" {
		t.Errorf("after the bad input: %s", txt)
	}
}

// TestCodeModeDaemonKilled: a daemon killed with SIGKILL leaves no script
// process behind, warm or running.
func TestCodeModeDaemonKilled(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	cs := harness.ConnectGoSDK(t, e, mcpxtest.Daemon, cfg, "2025-11-25", harness.NewProgressLog())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": `while (true) {}`}})
	deadline := time.Now().Add(30 * time.Second)
	for len(sandboxChildren(e.Bin)) < 2 { // the running one and a warm one
		if time.Now().After(deadline) {
			t.Fatalf("%d script processes, want 2", len(sandboxChildren(e.Bin)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// This test's daemon, by its status (other tests' daemons of the same
	// binary may still be stopping).
	pid := harness.DaemonStatus(t, e, cfg).PID
	before := sandboxChildren(e.Bin)
	syscall.Kill(pid, syscall.SIGKILL)
	// (mcpx serve may start a daemon anew, with warm children of its own:
	// only the killed daemon's must go.)
	for {
		left := 0
		for pid := range sandboxChildren(e.Bin) {
			if _, old := before[pid]; old {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d script processes outlived the daemon", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
