package codemode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// Scripts through the daemon path: a go-sdk host, mcpx serve, the daemon,
// a warm script process, and back. Numbers, not assertions:
//
//	go test -run '^$' -bench Exec ./internal/e2e/

// benchExecSession connects a go-sdk host to mcpx serve (the daemon) with
// the demo behind it, and runs one script so that everything has started.
func benchExecSession(b *testing.B) (*mcpxtest.Env, *mcp.ClientSession, *harness.ProgressLog) {
	e := mcpxtest.NewEnv(b)
	progress := harness.NewProgressLog()
	cs := harness.ConnectGoSDK(b, e, mcpxtest.Daemon, e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}), "2025-11-25", progress)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": "return (await tools.demo.echo({n: 1})).n"}}); err != nil {
		b.Fatal(err)
	}
	return e, cs, progress
}

// reportQuantiles reports the p50 and p99 of d in milliseconds.
func reportQuantiles(b *testing.B, d []time.Duration, what string) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	q := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), what+"-p50-ms")
	b.ReportMetric(q(0.99), what+"-p99-ms")
}

// BenchmarkExecTrivial: a trivial script, from the host's request to its
// result: back to back (each script's replacement process starts while
// the next script runs), and spaced (the pool has refilled, as when
// scripts come now and then).
func BenchmarkExecTrivial(b *testing.B) {
	b.Run("backtoback", func(b *testing.B) { benchExecTrivial(b, false) })
	b.Run("spaced", func(b *testing.B) { benchExecTrivial(b, true) })
}

func benchExecTrivial(b *testing.B, spaced bool) {
	e, cs, _ := benchExecSession(b)
	ctx := context.Background()
	var d []time.Duration
	for b.Loop() {
		if spaced {
			b.StopTimer()
			deadline := time.Now().Add(10 * time.Second)
			for len(sandboxChildren(e.Bin)) != 2 && time.Now().Before(deadline) { // the warm pool, refilled
				time.Sleep(time.Millisecond)
			}
			b.StartTimer()
		}
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": "return 1"}})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
		d = append(d, time.Since(start))
	}
	reportQuantiles(b, d, "start-to-result")
}

// BenchmarkExecCancel: a script with 8 inner calls in flight, cancelled by
// the host; the time from the host's cancel to the last of the 8 upstream
// cancels, by the demo's own clock.
func BenchmarkExecCancel(b *testing.B) {
	e, cs, _ := benchExecSession(b)
	var d []time.Duration
	seen := 0
	for b.Loop() {
		waits := countTool(e.Records("demo"), "request", "wait")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{
				"code": `await Promise.all(Array.from({ length: 8 }, () => tools.demo.wait({ seconds: 30 })))`}})
		}()
		deadline := time.Now().Add(20 * time.Second)
		for countTool(e.Records("demo"), "request", "wait") < waits+8 {
			if time.Now().After(deadline) {
				b.Fatal("the inner calls did not start")
			}
			time.Sleep(time.Millisecond)
		}
		at := time.Now()
		cancel()
		<-done
		for {
			evs := cancels(e.Records("demo"))
			if len(evs) >= seen+8 {
				var last time.Time
				for _, ev := range evs[seen:] {
					if t, err := time.Parse(time.RFC3339Nano, ev.At); err == nil && t.After(last) {
						last = t
					}
				}
				seen = len(evs)
				d = append(d, last.Sub(at))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d upstream cancels, want %d", len(evs), seen+8)
			}
			time.Sleep(time.Millisecond)
		}
	}
	reportQuantiles(b, d, "cancel-to-last-upstream-cancel")
}

// BenchmarkExec50: the memory of the daemon, and of the script processes,
// with 50 scripts running at once (each waiting in sleep).
func BenchmarkExec50(b *testing.B) {
	e, cs, progress := benchExecSession(b)
	for round := 0; b.Loop(); round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		token := func(i int) string { return fmt.Sprintf("exec50-%d-%d", round, i) }
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpx_exec", Arguments: map[string]any{"code": `progress(1); await sleep(60000)`},
					Meta: mcp.Meta{"progressToken": token(i)}})
			}()
		}
		deadline := time.Now().Add(60 * time.Second)
		for len(sandboxChildren(e.Bin)) < 50 {
			if time.Now().After(deadline) {
				b.Fatalf("%d script processes, want 50 or more", len(sandboxChildren(e.Bin)))
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Each script has reached its sleep once its progress came.
		harness.WaitUntil(b, 60*time.Second, "progress of the 50 scripts", func() bool {
			for i := range 50 {
				if len(progress.Of(token(i))) == 0 {
					return false
				}
			}
			return true
		})
		daemon, children, private := 0, 0, 0
		kids := sandboxChildren(e.Bin)
		for pid := range kids {
			children += memKiB(pid, "Pss:")
			private += memKiB(pid, "Private_Dirty:")
		}
		for _, pid := range daemonPids(e.Bin) {
			daemon += memKiB(pid, "Rss:")
		}
		b.ReportMetric(float64(daemon)/1024, "daemon-rss-MiB")
		b.ReportMetric(float64(children)/1024, "scripts-pss-MiB")
		b.ReportMetric(float64(private)/1024/float64(len(kids)), "per-script-private-MiB")
		cancel()
		wg.Wait()
	}
}

// memKiB is one line of a process's smaps_rollup (Rss, Pss: shared
// pages divided among their sharers, Private_Dirty), in KiB.
func memKiB(pid int, key string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// daemonPids are the running `mcpx daemon` processes of the binary bin.
func daemonPids(bin string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if exe, _ := os.Readlink(filepath.Join(d, "exe")); exe == bin && len(args) > 1 && args[1] == "daemon" {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, pid)
		}
	}
	return out
}
