package codemode

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestCodeModeDaemonBounds: what a script sends cannot exhaust the
// daemon. A tool call with 20 MB of arguments and a 6 MB mcpx.search fail
// at the script's message size limit, a search within it at the query's
// bound, and a 10 MB progress() message reaches a stdio host cut; the
// daemon's peak memory meanwhile stays within 32 MiB of what it held
// before (the limit is 1 MiB a line; it read each of these whole, and
// kept several copies, before), and its CPU time within 3 s. The sizes
// leave a script under the race detector on a loaded machine its time.
func TestCodeModeDaemonBounds(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	prog := harness.NewProgressLog()
	cs := harness.ConnectGoSDK(t, e, mcpxtest.Daemon, cfg, "2025-11-25", prog)
	v1, _ := harness.StartV1Daemon(t, e, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if txt := harness.ScriptText(harness.ExecScript(t, ctx, cs, `return (await tools.demo.echo({ n: 1 })).n`, nil)); txt != "1" {
		t.Fatalf("a first script: %s", txt)
	}
	pid := harness.DaemonStatus(t, e, cfg).PID
	rss0, cpu0 := procStatusKiB(pid, "VmRSS:"), cpuTicks(pid)

	for _, tc := range []struct{ code, want string }{
		{`return await tools.demo.echo({ x: "a".repeat(20e6) })`, "the call tool is 200000"},
		{`return await mcpx.search("ab ".repeat(2e6))`, "the call search is 600002"},
		{`return await mcpx.search("ab ".repeat(1000))`, "mcpx.search: the query is 3000 bytes, past the limit of 1024"},
	} {
		start := time.Now()
		res := harness.ExecScript(t, ctx, cs, tc.code, nil)
		t.Logf("%.50s: answered after %v", tc.code, time.Since(start))
		if txt := harness.ScriptText(res); !res.IsError || !strings.Contains(txt, tc.want) || tc.want[0] == 't' && !strings.Contains(txt, "bytes as JSON, past the script's message size limit (1048576 bytes)") {
			t.Errorf("%s: %.300s, want an error containing %q", tc.code, txt, tc.want)
		}
	}

	// The search of 6 MB through /v1/exec, with a timeout: the script
	// fails at its limit, not at its timeout after the search (which took
	// 5 s of the daemon's CPU).
	start := time.Now()
	resp := v1.Do(ctx, http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{Code: `return await mcpx.search("ab ".repeat(2e6))`, TimeoutMs: 15000}, nil)
	defer resp.Body.Close()
	stream := &harness.CallStream{Resp: resp, Sc: bufio.NewScanner(resp.Body), T: t}
	if ev := stream.Next(); ev.Type != "started" {
		t.Fatalf("/v1/exec's first event: %+v", ev)
	}
	final, _ := stream.Final()
	t.Logf("/v1/exec with a 15 s timeout answered after %v", time.Since(start))
	if final.Type != "result" || !final.IsError || !strings.Contains(string(final.Result), "message size limit") {
		t.Errorf("/v1/exec: %+v %s, want the script failed at its message size limit", final, final.Result)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": `progress(1, 2, "m".repeat(10e6)); return 1`},
		Meta: mcp.Meta{"progressToken": "cut"}})
	switch {
	case err != nil:
		t.Errorf("a script with a long progress message: %v", err)
	case res.IsError:
		t.Errorf("a script with a long progress message: %s", harness.ScriptText(res))
	default:
		note := prog.Wait(t, "cut", 1, 30*time.Second)[0]
		if want := strings.Repeat("m", 1024) + " … [cut: 10000000 characters in all]"; note.Message != want {
			t.Errorf("the host's progress message is %d bytes (%.60q…), want %d", len(note.Message), note.Message, len(want))
		}
	}

	hwm, cpu := procStatusKiB(pid, "VmHWM:"), cpuTicks(pid)-cpu0
	t.Logf("daemon: resident %d KiB before, peak %d KiB after; CPU %d ms", rss0, hwm, cpu*10)
	if rss0 == 0 || hwm-rss0 > 32<<10 {
		t.Errorf("the daemon's peak resident memory %d KiB is more than 32 MiB over the %d KiB it held before", hwm, rss0)
	}
	if cpu > 300 {
		t.Errorf("the daemon used %d ms of CPU time, more than 3 s", cpu*10)
	}
}

// procStatusKiB is one line of a process's /proc status (VmRSS: resident
// now, VmHWM: its peak), in KiB.
func procStatusKiB(pid int, key string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// cpuTicks is the CPU time a process has used, user and system, in clock
// ticks (10 ms).
func cpuTicks(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return ut + st
}
