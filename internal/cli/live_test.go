package cli_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/sock"
)

// Every live test runs in both modes: the built binary with the daemon it
// starts, and cli.Run against daemon.Run in the test process.

const callTimeout = 60 * time.Second // bound on any command expected to end by itself

// progressLine is a progress line off a terminal.
var progressLine = regexp.MustCompile(`^progress \d+(\.\d+)?(/\d+(\.\d+)? \(\d+%\))?( .*)? \[\d+(\.\d)?s\]$`)

// TestCallExport: the result on stdout, progress lines on stderr.
func TestCallExport(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		out, errb, code := g.run(callTimeout, g.args("call", "demo.export", `{"seconds":0.5,"steps":5}`)...)
		if code != 0 {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errb)
		}
		if want := "exported 1000 records in 5 parts\n"; out != want {
			t.Errorf("stdout = %q, want %q", out, want)
		}
		lines := strings.Split(strings.TrimSuffix(errb, "\n"), "\n")
		for _, l := range lines {
			if !progressLine.MatchString(l) {
				t.Errorf("stderr line %q is not a progress line; stderr:\n%s", l, errb)
			}
		}
		if first := lines[0]; !strings.HasPrefix(first, "progress 1/5 (20%) exporting part 1 of 5 (200 records) [") {
			t.Errorf("first progress line = %q, want part 1 of 5", first)
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "progress 5/5 (100%) exporting part 5 of 5 (1000 records) [") {
			t.Errorf("last progress line = %q, want part 5 of 5", last)
		}

		// --json prints the upstream's result as it is.
		out, errb, code = g.run(callTimeout, g.args("call", "--json", "--quiet", "demo.export", `{"seconds":0,"steps":2}`)...)
		if code != 0 || errb != "" {
			t.Fatalf("--json --quiet: exit %d, stderr %q; want 0 and nothing", code, errb)
		}
		// The upstream's result byte for byte: a 2026-07-28 upstream's
		// carries its era's "resultType":"complete" (hosts on a legacy
		// revision get it removed; the CLI gets what the upstream sent).
		want := `{"content":[{"type":"text","text":"exported 1000 records in 2 parts"}],"structuredContent":{"records":1000,"parts":2}}` + "\n"
		if st := g.status(); len(st.Upstreams) == 1 && st.Upstreams[0].Protocol == "2026-07-28" {
			want = strings.TrimSuffix(want, "}\n") + `,"resultType":"complete"}` + "\n"
		}
		if out != want {
			t.Errorf("--json printed\n%s\nwant\n%s", out, want)
		}
	})
}

// TestCallFlagsAfterArguments: flags may follow the tool and its
// arguments, and --json keeps the result byte for byte (a 20-digit integer).
func TestCallFlagsAfterArguments(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		args := `{"n":12345678901234567890,"s":"x"}`
		for _, argv := range [][]string{
			{"call", "demo.echo", args, "--json", "--config", g.cfg},
			{"call", "--config", g.cfg, "demo.echo", "--json", args},
			{"call", "--json", "demo.echo", args, "--config=" + g.cfg},
		} {
			out, errb, code := g.run(callTimeout, argv...)
			if code != 0 {
				t.Fatalf("mcpx %q: exit %d\nstdout:\n%s\nstderr:\n%s", argv, code, out, errb)
			}
			if !strings.Contains(out, `"structuredContent":`+args) || !strings.HasPrefix(out, "{") || !json.Valid([]byte(out)) {
				t.Errorf("mcpx %q printed %q, want the raw result with structuredContent %s", argv, out, args)
			}
		}
		// Without --json, the text content.
		out, _, code := g.run(callTimeout, "call", "demo.echo", "{}", "--config", g.cfg)
		if code != 0 || out != "{}\n" {
			t.Errorf("call demo.echo {}: exit %d, stdout %q; want 0 and %q", code, out, "{}\n")
		}
		// The exposed name works as well as SERVER.TOOL, and no arguments mean {}.
		out, _, code = g.run(callTimeout, "call", "demo__echo", "--config", g.cfg)
		if code != 0 || out != "{}\n" {
			t.Errorf("call demo__echo: exit %d, stdout %q; want 0 and %q", code, out, "{}\n")
		}
	})
}

// TestCallErrors: a tool error exits 1, an unknown server or tool 2.
func TestCallErrors(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		out, errb, code := g.run(callTimeout, g.args("call", "demo.fail")...)
		if code != 1 {
			t.Errorf("demo.fail: exit %d, want 1\nstderr:\n%s", code, errb)
		}
		if !strings.Contains(out, "the fail tool always fails") {
			t.Errorf("demo.fail: stdout = %q, want the tool's error text", out)
		}
		out, errb, code = g.run(callTimeout, g.args("call", "nosuch.tool")...)
		if code != 2 || out != "" || !strings.Contains(errb, `unknown tool "nosuch.tool"`) {
			t.Errorf("nosuch.tool: exit %d, stdout %q, stderr %q; want 2, nothing, and unknown tool", code, out, errb)
		}
		// An unknown tool of a known server is the same mistake as an
		// unknown server: 2, not 1 (the tool's own error).
		out, errb, code = g.run(callTimeout, g.args("call", "demo.nosuch")...)
		if code != 2 || out != "" || !strings.Contains(errb, `unknown tool "demo.nosuch"`) {
			t.Errorf("demo.nosuch: exit %d, stdout %q, stderr %q; want 2, nothing, and unknown tool", code, out, errb)
		}
	})
}

// TestCallTimeouts: --idle-timeout and --timeout end the call with exit 3
// and a message naming the timer, and the upstream is told why.
func TestCallTimeouts(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		for _, tc := range []struct {
			name, tool, args, flag, value, reason string
		}{
			{"idle", "wait", `{"seconds":30}`, "--idle-timeout", "300ms", "idle timeout: no progress for 300ms"},
			{"idle after the arguments", "wait", `{"seconds":31}`, "--idle-timeout", "400ms", "idle timeout: no progress for 400ms"},
			{"hard", "wait", `{"seconds":32}`, "--timeout", "500ms", "hard maximum of 500ms reached"},
			// Steady progress (every 100ms) does not hold off the hard maximum.
			{"hard under progress", "export", `{"seconds":30,"steps":300}`, "--timeout", "800ms", "hard maximum of 800ms reached"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				argv := g.args("call", tc.flag, tc.value, "demo."+tc.tool, tc.args)
				if strings.Contains(tc.name, "after") {
					argv = g.args("call", "demo."+tc.tool, tc.args, tc.flag, tc.value)
				}
				start := time.Now()
				out, errb, code := g.run(callTimeout, argv...)
				took := time.Since(start)
				if code != 3 {
					t.Errorf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errb)
				}
				if out != "" {
					t.Errorf("stdout = %q, want nothing", out)
				}
				if want := "mcpx: " + tc.reason + "\n"; !strings.HasSuffix(errb, want) {
					t.Errorf("stderr = %q, want it to end with %q", errb, want)
				}
				if d, _ := time.ParseDuration(tc.value); took < d {
					t.Errorf("the call ended after %s, before its %s timer", took, d)
				}
				ev := g.e.WaitRecord("demo", 10*time.Second, func(ev demo.Event) bool {
					return ev.Event == demo.EventCancelled && ev.Reason == tc.reason
				})
				if ev.Tool != tc.tool || ev.Known == nil || !*ev.Known {
					t.Errorf("cancellation %+v, want one that matched the running %s call", ev, tc.tool)
				}
			})
		}
	})
}

// TestCallInterrupt: Ctrl-C cancels the call upstream with the reason
// "interrupted by user" and exits 130. Spawned, it is a real SIGINT.
func TestCallInterrupt(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		r := g.start(g.args("call", "demo.export", `{"seconds":30}`)...)
		r.waitStderr("progress 1/20", callTimeout)
		r.interrupt()
		start := time.Now()
		code := r.wait(5 * time.Second)
		if code != 130 {
			t.Errorf("exit %d after Ctrl-C, want 130\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
		}
		t.Logf("exited %s after the interrupt", time.Since(start).Round(time.Millisecond))
		if out := r.stdout.String(); out != "" {
			t.Errorf("stdout = %q, want nothing", out)
		}
		if errb := r.stderr.String(); !strings.HasSuffix(errb, "mcpx: interrupted by user\n") {
			t.Errorf("stderr = %q, want it to end with the interrupt", errb)
		}
		ev := g.e.WaitRecord("demo", 10*time.Second, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled })
		if ev.Reason != "interrupted by user" || ev.Tool != "export" || ev.Known == nil || !*ev.Known {
			t.Errorf("the demo recorded %+v, want a cancellation of the running export with reason %q", ev, "interrupted by user")
		}
		fin := g.e.WaitRecord("demo", 10*time.Second, func(ev demo.Event) bool {
			return ev.Event == demo.EventFinished && ev.Tool == "export"
		})
		if fin.Outcome != demo.OutcomeCancelled {
			t.Errorf("the export finished with %q, want %q", fin.Outcome, demo.OutcomeCancelled)
		}
	})
}

// TestTools: the list holds every demo tool under its exposed name; a
// search ranks the best match first.
func TestTools(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		out, errb, code := g.run(callTimeout, g.args("tools")...)
		if code != 0 || errb != "" {
			t.Fatalf("tools: exit %d, stderr %q", code, errb)
		}
		names := firstFields(out)
		for _, want := range []string{"demo__export", "demo__scan", "demo__wait", "demo__echo", "demo__fail"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools does not list %s:\n%s", want, out)
			}
		}

		out, _, code = g.run(callTimeout, g.args("tools", "export")...)
		if names := firstFields(out); code != 0 || len(names) == 0 || names[0] != "demo__export" {
			t.Errorf("tools export: exit %d, want demo__export first:\n%s", code, out)
		}
		out, _, code = g.run(callTimeout, "tools", "export", "records", "--config", g.cfg)
		if names := firstFields(out); code != 0 || len(names) == 0 || names[0] != "demo__export" {
			t.Errorf("tools export records --config: exit %d, want demo__export first:\n%s", code, out)
		}

		out, _, code = g.run(callTimeout, g.args("tools", "--json")...)
		var tools apitype.Tools
		if err := json.Unmarshal([]byte(out), &tools); err != nil || code != 0 {
			t.Fatalf("tools --json: exit %d, %v:\n%s", code, err, out)
		}
		i := slices.IndexFunc(tools.Tools, func(tl apitype.Tool) bool { return tl.Name == "demo__export" })
		if i < 0 {
			t.Fatalf("tools --json lacks demo__export:\n%s", out)
		}
		if tl := tools.Tools[i]; tl.Server != "demo" || tl.Tool != "export" || !strings.Contains(string(tl.InputSchema), `"seconds"`) {
			t.Errorf("demo__export = %+v, want server demo, tool export and its input schema", tl)
		}
		// Piped, each description's first line is whole, never cut.
		plain, _, _ := g.run(callTimeout, g.args("tools")...)
		for _, tl := range tools.Tools {
			first, _, _ := strings.Cut(tl.Description, "\n")
			if !strings.Contains(plain, first) {
				t.Errorf("piped mcpx tools cuts %s's description %q:\n%s", tl.Name, first, plain)
			}
		}

		out, errb, code = g.run(callTimeout, g.args("tools", "zzzqqq")...)
		if code != 0 || out != "" || errb != "no tools match \"zzzqqq\"\n" {
			t.Errorf("tools zzzqqq: exit %d, stdout %q, stderr %q; want 0, nothing, no tools match", code, out, errb)
		}
	})
}

// firstFields returns the first field of each line.
func firstFields(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// TestStatusInFlight: status shows the demo upstream ready, with its pid
// and protocol, and the call in flight with its progress.
func TestStatusInFlight(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		r := g.start(g.args("call", "demo.export", `{"seconds":30,"steps":300}`)...)
		r.waitStderr("progress 1/300", callTimeout)

		// Progress reaches the status shortly after the CLI sees it. The
		// upstream's id is recorded by the call's goroutine once its
		// request is sent, and the upstream's first progress may overtake
		// it on a loaded machine: wait for both.
		var st *apitype.Status
		deadline := time.Now().Add(10 * time.Second)
		for {
			st = g.status()
			if len(st.Calls) == 1 && st.Calls[0].Progress != nil && st.Calls[0].UpstreamID != 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status shows no call with progress within 10s: %+v", st)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if st.PID <= 0 || st.Version == "" || st.Config != g.cfg || st.Socket == "" {
			t.Errorf("daemon: pid %d, version %q, config %q, socket %q; want a pid, a version, %s, a socket", st.PID, st.Version, st.Config, st.Socket, g.cfg)
		}
		if m == inProcess && st.PID != os.Getpid() {
			t.Errorf("in-process daemon pid %d, want the test's %d", st.PID, os.Getpid())
		}
		if len(st.Upstreams) != 1 {
			t.Fatalf("upstreams = %+v, want demo only", st.Upstreams)
		}
		u := st.Upstreams[0]
		if u.Name != "demo" || u.State != "ready" || u.PID <= 0 || u.InFlight != 1 || u.Starts != 1 {
			t.Errorf("upstream = %+v, want demo ready with a pid, 1 in flight, 1 start", u)
		}
		if !slices.Contains(config.KnownProtocolVersions, u.Protocol) {
			t.Errorf("upstream protocol %q, want one of %v", u.Protocol, config.KnownProtocolVersions)
		}
		if s := processState(u.PID); s == "" || s == "Z" {
			t.Errorf("upstream pid %d: state %q, want a live process", u.PID, s)
		}
		c := st.Calls[0]
		if c.Server != "demo" || c.Tool != "export" || c.Method != "tools/call" || c.UpstreamID == 0 || c.Started.IsZero() {
			t.Errorf("call = %+v, want demo export tools/call with an upstream id", c)
		}
		if p := c.Progress; p.Total == nil || *p.Total != 300 || p.Progress < 1 || !strings.HasPrefix(p.Message, "exporting part ") {
			t.Errorf("call progress = %+v, want n/300 exporting part n", p)
		}

		out, errb, code := g.run(callTimeout, g.args("status")...)
		if code != 0 {
			t.Fatalf("status: exit %d\n%s", code, errb)
		}
		upLine := regexp.MustCompile(`(?m)^demo\s+ready\s+` + strconv.Itoa(u.PID) + `\s+` + regexp.QuoteMeta(u.Protocol) + `\s+1\s+1\s+\S+ ago$`)
		callLine := regexp.MustCompile(`(?m)^#` + strconv.FormatUint(c.ID, 10) + `\s+demo\.export\s+\S+\s+\d+/300\s+exporting part \d+ of 300 \(\d+ records\)\s+from cli-\d+$`)
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^daemon\s+pid ` + strconv.Itoa(st.PID) + `, version \S+, up \S+$`),
			regexp.MustCompile(`(?m)^config\s+` + regexp.QuoteMeta(g.cfg) + `$`),
			regexp.MustCompile(`(?m)^SERVER\s+STATE\s+PID\s+PROTOCOL\s+IN FLIGHT\s+STARTS\s+SINCE$`),
			upLine,
			regexp.MustCompile(`(?m)^CALLS IN FLIGHT$`),
			callLine,
		} {
			if !want.MatchString(out) {
				t.Errorf("status lacks a line matching %s:\n%s", want, out)
			}
		}

		r.interrupt()
		if code := r.wait(10 * time.Second); code != 130 {
			t.Errorf("the call exited %d after Ctrl-C, want 130", code)
		}
		st = g.status()
		if len(st.Calls) != 0 || st.Upstreams[0].InFlight != 0 {
			t.Errorf("after the call: calls %+v, in flight %d; want none", st.Calls, st.Upstreams[0].InFlight)
		}
	})
}

// TestStatusNoDaemon: status does not start a daemon; it says none runs and
// exits 3. stop then has nothing to stop.
func TestStatusNoDaemon(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, true)
		for range 2 {
			out, errb, code := g.run(callTimeout, g.args("status")...)
			if code != 3 || errb != "" || !strings.HasPrefix(out, "daemon   not running (socket ") {
				t.Errorf("status: exit %d, stdout %q, stderr %q; want 3 and not running", code, out, errb)
			}
		}
		out, errb, code := g.run(callTimeout, g.args("stop")...)
		if code != 0 || out != "no daemon was running\n" {
			t.Errorf("stop: exit %d, stdout %q, stderr %q; want 0 and no daemon was running", code, out, errb)
		}
	})
}

// TestStop: stop ends a call in flight with "mcpx is stopping", stops the
// daemon (its lock is free, its socket gone) and its upstream process.
func TestStop(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		g := newGateway(t, m, false)
		r := g.start(g.args("call", "demo.export", `{"seconds":30}`)...)
		r.waitStderr("progress 1/20", callTimeout)
		st := g.status()
		if len(st.Upstreams) != 1 || st.Upstreams[0].PID <= 0 {
			t.Fatalf("upstreams = %+v, want demo with a pid", st.Upstreams)
		}
		demoPID := st.Upstreams[0].PID
		lock := strings.TrimSuffix(st.Socket, ".sock") + ".lock"

		out, errb, code := g.run(callTimeout, g.args("stop")...)
		if code != 0 || out != "daemon stopped\n" {
			t.Fatalf("stop: exit %d, stdout %q, stderr %q; want 0 and daemon stopped", code, out, errb)
		}
		// The call in flight ended with the daemon's reason, upstream too.
		if code := r.wait(10 * time.Second); code != 3 || !strings.HasSuffix(r.stderr.String(), "mcpx: mcpx is stopping\n") {
			t.Errorf("the call in flight: exit %d, stderr %q; want 3 and mcpx is stopping", code, r.stderr)
		}
		ev := g.e.WaitRecord("demo", 10*time.Second, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled })
		if ev.Reason != "mcpx is stopping" || ev.Tool != "export" {
			t.Errorf("the demo recorded %+v, want the export cancelled with reason %q", ev, "mcpx is stopping")
		}

		// stop returns once the lock is free: by then the upstream is gone.
		unlock, err := sock.Lock(lock)
		if err != nil {
			t.Errorf("the daemon's lock is still held after stop: %v", err)
		} else {
			unlock()
		}
		if s := processState(demoPID); s != "" {
			t.Errorf("the demo upstream (pid %d) is still there after stop, state %q", demoPID, s)
		}
		if _, err := os.Stat(st.Socket); !os.IsNotExist(err) {
			t.Errorf("the socket %s is still there after stop (%v)", st.Socket, err)
		}
		switch m {
		case inProcess:
			if err := g.waitDaemon(10 * time.Second); err != nil {
				t.Errorf("daemon.Run after stop: %v", err)
			}
		case spawned:
			// The daemon is nobody's child here; it may linger as a zombie
			// of whoever adopted it, but must not run.
			deadline := time.Now().Add(5 * time.Second)
			for s := processState(st.PID); s != "" && s != "Z"; s = processState(st.PID) {
				if time.Now().After(deadline) {
					t.Errorf("the daemon (pid %d) still runs 5s after stop, state %q", st.PID, s)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		out, _, code = g.run(callTimeout, g.args("status")...)
		if code != 3 || !strings.Contains(out, "not running") {
			t.Errorf("status after stop: exit %d, stdout %q; want 3 and not running", code, out)
		}
	})
}
