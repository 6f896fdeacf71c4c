package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// Chaos from upstreams (the fixtures of harness/fixture_chaos.go): a progress
// flood, a stderr flood, a call never answered. For each: what the host
// sees and when, that mcpx's memory stays bounded, and that the next call
// works.

// memKB returns a field of /proc/<pid>/status ("VmRSS", "VmHWM") in KB.
func memKB(t testing.TB, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// checkIncreasing fails unless vals strictly increase and end at last.
func checkIncreasing(t testing.TB, vals []float64, last float64) {
	t.Helper()
	for i := 1; i < len(vals); i++ {
		if vals[i] <= vals[i-1] {
			t.Fatalf("progress %d is %v after %v: out of order or repeated", i, vals[i], vals[i-1])
		}
	}
	if len(vals) == 0 || vals[len(vals)-1] != last {
		t.Fatalf("the last progress the host saw is not %v (got %d values)", last, len(vals))
	}
}

// TestProgressFlood: an upstream sends 10,000 progress notifications in
// one second. A host that reads them gets every one, in order, before the
// result, and the daemon's memory stays flat.
func TestProgressFlood(t *testing.T) {
	const count, rate = 10000, 10000
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"flood": harness.FixtureServer("progressflood", nil)})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/call", map[string]any{"name": "flood__work", "arguments": map[string]any{"count": 1}}), harness.WaitLong)
		var daemon, rssBefore int
		if mode == mcpxtest.Daemon {
			daemon = harness.DaemonPID(t, e)
			rssBefore = memKB(t, daemon, "VmRSS")
		}
		start := time.Now()
		id := h.Request("tools/call", map[string]any{"name": "flood__work", "arguments": map[string]any{"count": count, "rate": rate},
			"_meta": map[string]any{"progressToken": "flood"}})
		res := h.Result(id, harness.WaitLong)
		took := time.Since(start)
		vals, late := harness.ProgressValues(t, h.Received(), `"flood"`, id)
		checkIncreasing(t, vals, count)
		if late > 0 {
			t.Errorf("%d progress notifications after the result", late)
		}
		if len(vals) != count {
			t.Errorf("the host received %d of %d progress notifications: a host that reads gets all", len(vals), count)
		}
		t.Logf("%s: upstream %q; the host received %d progress notifications in order and the result %s after the call (%.0f/s)",
			mode, harness.ResultText(t, res), len(vals), took.Round(time.Millisecond), float64(len(vals))/took.Seconds())
		if daemon != 0 {
			rss, hwm := memKB(t, daemon, "VmRSS"), memKB(t, daemon, "VmHWM")
			t.Logf("daemon memory: RSS %d KB before, %d KB after, peak %d KB", rssBefore, rss, hwm)
			if rss-rssBefore > 64<<10 {
				t.Errorf("the daemon grew by %d KB over a flood of %d notifications", rss-rssBefore, count)
			}
		}
		// The next call works.
		if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "flood__work", "arguments": map[string]any{"count": 3}}), harness.WaitLong)); !strings.HasPrefix(got, "sent 3") {
			t.Errorf("next call: %q", got)
		}
	})
}

// TestProgressFloodSlowHost: an upstream sends 50,000 progress
// notifications over five seconds to a host that reads nothing for six.
// mcpx holds a bounded amount for it (it coalesces queued values of the
// token), so the daemon's memory stays bounded; when the host reads at
// last it gets values in order, the last one (50,000) among them, then
// the result; and the next call works.
func TestProgressFloodSlowHost(t *testing.T) {
	const count, rate = 50000, 10000
	e := mcpxtest.NewEnv(t)
	cfg := harness.WriteServers(t, e, nil, map[string]any{"flood": harness.FixtureServer("progressflood", nil)})
	ctx, cancel := context.WithTimeout(context.Background(), 2*harness.WaitLong)
	defer cancel()
	cmd := e.Command(ctx, "serve", "--config", cfg, "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	br := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// readUntil reads messages until one is the response to id.
	readUntil := func(id string) []*jsonrpc.Message {
		var out []*jsonrpc.Message
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading from mcpx serve: %v", err)
			}
			m, err := jsonrpc.Decode(line)
			if err != nil {
				t.Fatalf("bad message %q: %v", line, err)
			}
			out = append(out, m)
			if m.IsResponse() && m.ID.String() == id {
				return out
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`)
	readUntil("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood__work","arguments":{"count":1}}}`)
	readUntil("2")
	daemon := harness.DaemonPID(t, e)
	daemonBefore, serveBefore := memKB(t, daemon, "VmRSS"), memKB(t, cmd.Process.Pid, "VmRSS")

	start := time.Now()
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flood__work","arguments":{"count":%d,"rate":%d},"_meta":{"progressToken":"slow"}}}`, count, rate))
	time.Sleep(6 * time.Second) // the host reads nothing
	daemonPeak, servePeak := memKB(t, daemon, "VmHWM"), memKB(t, cmd.Process.Pid, "VmHWM")
	msgs := readUntil("3")
	took := time.Since(start)
	var vals []float64
	for _, m := range msgs {
		if m.Method != "notifications/progress" {
			continue
		}
		var p harness.ProgressNote
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, p.Progress)
	}
	checkIncreasing(t, vals, count)
	res := msgs[len(msgs)-1]
	if res.Error != nil {
		t.Fatalf("the flood call failed: %s", res.Encode())
	}
	if len(vals) >= count {
		t.Errorf("the host received all %d values though it read nothing for 6 s: nothing was coalesced", len(vals))
	}
	t.Logf("a host that read nothing for 6 s, then everything: %d of %d progress values (in order, the last included), then the result, %s after the call",
		len(vals), count, took.Round(time.Millisecond))
	t.Logf("memory (RSS before the flood -> peak): daemon %d -> %d KB, mcpx serve %d -> %d KB", daemonBefore, daemonPeak, serveBefore, servePeak)
	if daemonPeak-daemonBefore > 64<<10 {
		t.Errorf("the daemon grew by %d KB holding a slow host's progress", daemonPeak-daemonBefore)
	}
	if servePeak-serveBefore > 64<<10 {
		t.Errorf("mcpx serve grew by %d KB holding a slow host's progress", servePeak-serveBefore)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"flood__work","arguments":{"count":2}}}`)
	if m := readUntil("4"); m[len(m)-1].Error != nil {
		t.Errorf("next call: %s", m[len(m)-1].Encode())
	}
}

// TestStderrFlood: an upstream writes megabytes a second to stderr, for
// as long as it runs. Its calls are answered as promptly as ever, mcpx's
// memory stays bounded, and the log gets at most 50 of its lines a second
// plus a count of those left out.
func TestStderrFlood(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"noisy": harness.FixtureServer("stderrflood", nil)})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		call := func() (int64, time.Duration) {
			start := time.Now()
			res := h.Result(h.Request("tools/call", map[string]any{"name": "noisy__work", "arguments": map[string]any{}}), harness.WaitLong)
			n, err := strconv.ParseInt(harness.ResultText(t, res), 10, 64)
			if err != nil {
				t.Fatalf("result %s", res)
			}
			return n, time.Since(start)
		}
		first, _ := call()
		began := time.Now()
		var daemon, rssBefore int
		if mode == mcpxtest.Daemon {
			daemon = harness.DaemonPID(t, e)
			rssBefore = memKB(t, daemon, "VmRSS")
		}
		var worst time.Duration
		var last int64
		for range 30 { // 3 s of calls under the flood
			time.Sleep(100 * time.Millisecond)
			n, took := call()
			worst, last = max(worst, took), n
		}
		secs := time.Since(began).Seconds()
		rate := float64(last-first) / secs / (1 << 20)
		t.Logf("%s: the upstream wrote %.1f MB/s to stderr; 30 calls under the flood, the slowest answered in %s",
			mode, rate, worst.Round(time.Microsecond))
		if rate < 1 {
			t.Errorf("the flood was only %.2f MB/s", rate)
		}
		if worst > 2*time.Second {
			t.Errorf("a call took %s under the flood", worst)
		}
		if daemon == 0 {
			return
		}
		rss, hwm := memKB(t, daemon, "VmRSS"), memKB(t, daemon, "VmHWM")
		t.Logf("daemon memory: RSS %d KB before, %d KB after %.0f MB of stderr, peak %d KB", rssBefore, rss, float64(last-first)/(1<<20), hwm)
		if rss-rssBefore > 32<<10 {
			t.Errorf("the daemon grew by %d KB under the stderr flood", rss-rssBefore)
		}
		logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
		if len(logs) != 1 {
			t.Fatalf("daemon logs: %v", logs)
		}
		b, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		var logged, notes int
		var left int64
		for line := range strings.SplitSeq(string(b), "\n") {
			var rec struct {
				Msg   string `json:"msg"`
				Count int64  `json:"count"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch rec.Msg {
			case "upstream stderr":
				logged++
			case "upstream stderr lines not logged (rate limit)":
				notes++
				left += rec.Count
			}
		}
		alive := time.Since(began).Seconds() + 2 // and before: its start, the first call
		t.Logf("daemon log: %d stderr lines logged, %d notes counting %d lines left out, %d bytes of log", logged, notes, left, len(b))
		if float64(logged) > 50*(alive+1) {
			t.Errorf("%d stderr lines logged in about %.0f s: more than 50 a second", logged, alive)
		}
		if notes == 0 || left == 0 {
			t.Errorf("the log does not say how many lines it left out")
		}
	})
}

// TestHangOnCall: an upstream never answers a call. The call ends by its
// idle timer; the host gets the timeout error when the timer fires, not
// before; other calls to the same upstream meanwhile and afterwards are
// answered at once, by the same process.
func TestHangOnCall(t *testing.T) {
	const idle = 500 * time.Millisecond
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServers(t, e, nil, map[string]any{"hang": harness.FixtureServer("hang", map[string]any{"idleTimeout": idle.String()})})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		h.Result(h.Request("tools/call", map[string]any{"name": "hang__work", "arguments": map[string]any{}}), harness.WaitLong)
		status := func() string {
			if mode != mcpxtest.Daemon {
				return ""
			}
			out, _, _ := e.Run(harness.WaitLong, "status", "--config", cfg)
			return out
		}
		before := status()

		start := time.Now()
		hung := h.Request("tools/call", map[string]any{"name": "hang__work", "arguments": map[string]any{"hang": true}})
		other := h.Request("tools/call", map[string]any{"name": "hang__work", "arguments": map[string]any{}})
		h.Result(other, harness.WaitLong)
		otherTook := time.Since(start)
		got, r := harness.ResponseError(t, h, hung)
		hungTook := r.At.Sub(start)
		if got.Code != harness.CodeTimeout || got.Kind != "idle_timeout" {
			t.Errorf("the hung call: %d %q kind %q, want %d idle_timeout", got.Code, got.Message, got.Kind, harness.CodeTimeout)
		}
		if hungTook < idle || hungTook > idle+2*time.Second {
			t.Errorf("the hung call ended %s after it was sent, want about its %s idle timeout", hungTook, idle)
		}
		if otherTook > idle {
			t.Errorf("a call sent with the hung one took %s: it waited behind it", otherTook)
		}
		next := time.Now()
		res := h.Result(h.Request("tools/call", map[string]any{"name": "hang__work", "arguments": map[string]any{}}), harness.WaitLong)
		t.Logf("%s: the hung call ended with %q %s after it was sent; a call sent with it was answered in %s, the next one in %s",
			mode, got.Message, hungTook.Round(time.Millisecond), otherTook.Round(time.Millisecond), time.Since(next).Round(time.Millisecond))
		if harness.ResultText(t, res) != "ok" {
			t.Errorf("next call: %s", res)
		}
		if after := status(); before != "" && pidColumn(before) != pidColumn(after) {
			t.Errorf("the upstream was restarted: status before\n%s\nafter\n%s", before, after)
		}
	})
}

// pidColumn returns the PID of the "hang" row of `mcpx status`.
func pidColumn(status string) string {
	for line := range strings.SplitSeq(status, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "hang" {
			return f[2]
		}
	}
	return ""
}
