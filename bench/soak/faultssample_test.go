package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
)

// How the soak samples its replicas: every sampleEvery, each replica's
// resident memory and descriptors from /proc, and its goroutines from the
// Go runtime's scheduler trace (GODEBUG schedtrace with scheddetail, which
// prints every goroutine the runtime keeps, with its status, every 5 s on
// the replica's stderr): those not dead are counted, the runtime's own
// included (a few more than runtime.NumGoroutine).
const (
	sampleEvery = 5 * time.Second
	schedTrace  = "schedtrace=5000,scheddetail=1"
)

// usage is one sample of a replica.
type usage struct {
	at              time.Time
	rssKiB, fds, gr int
}

// schedLine reads a line of the scheduler trace, and reports whether it
// was one.
func (r *replica) schedLine(l string) bool {
	switch {
	case strings.HasPrefix(l, "SCHED "):
		r.mu.Lock()
		if r.counted > 0 {
			r.gor = r.counted
		}
		r.counted = 0
		r.mu.Unlock()
		return true
	case strings.HasPrefix(l, "  G"):
		// "  G12: status=4(select) m=nil lockedm=nil"; 6 is dead (kept
		// for reuse).
		if _, st, ok := strings.Cut(l, "status="); ok && !strings.HasPrefix(st, "6(") {
			r.mu.Lock()
			r.counted++
			r.mu.Unlock()
		}
		return true
	case strings.HasPrefix(l, "  P"), strings.HasPrefix(l, "  M"):
		return true
	}
	return false
}

// sampleEvery samples the replicas every d until the returned func is
// called.
func (s *soak) sampleEvery(d time.Duration) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.sample("")
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// sample reads each running replica's usage; when is a note to log it
// under ("" logs nothing).
func (s *soak) sample(when string) {
	for _, r := range s.reps {
		r.mu.Lock()
		cmd, gr := r.cmd, r.gor
		r.mu.Unlock()
		if cmd == nil {
			continue
		}
		pid := cmd.Process.Pid
		u := usage{at: time.Now(), gr: gr}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for l := range strings.Lines(string(b)) {
				if v, ok := strings.CutPrefix(l, "VmRSS:"); ok && len(strings.Fields(v)) > 0 {
					u.rssKiB, _ = strconv.Atoi(strings.Fields(v)[0])
				}
			}
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		u.fds = len(fds)
		if u.rssKiB == 0 {
			continue // it died between the two reads
		}
		r.mu.Lock()
		r.samples = append(r.samples, u)
		r.mu.Unlock()
		if when != "" {
			s.note(fmt.Sprintf("%s: replica %s rss %d KiB, %d descriptors, %d goroutines", when, r.name, u.rssKiB, u.fds, u.gr))
		}
	}
}

// usageTable is each replica's samples as a table: the first, the peak
// and the last of each measure over the run, across its starts (a
// replica's goroutines read 0 until its first trace), and how many times
// it started.
func (s *soak) usageTable(b *strings.Builder) {
	fmt.Fprintf(b, "\n| replica (samples every %v) | starts | samples | RSS first / peak / last | descriptors first / peak / last | goroutines first / peak / last |\n|---|--:|--:|--:|--:|--:|\n", sampleEvery)
	for _, r := range s.reps {
		r.mu.Lock()
		xs := append([]usage(nil), r.samples...)
		starts := r.starts
		r.mu.Unlock()
		if len(xs) == 0 {
			continue
		}
		var peak usage
		firstGr := 0
		for _, x := range xs {
			peak.rssKiB, peak.fds, peak.gr = max(peak.rssKiB, x.rssKiB), max(peak.fds, x.fds), max(peak.gr, x.gr)
			if firstGr == 0 {
				firstGr = x.gr
			}
		}
		first, last := xs[0], xs[len(xs)-1]
		mib := func(k int) string { return fmt.Sprintf("%.1f", float64(k)/1024) }
		fmt.Fprintf(b, "| %s | %d | %d | %s / %s / %s MiB | %d / %d / %d | %d / %d / %d |\n", r.name, starts, len(xs),
			mib(first.rssKiB), mib(peak.rssKiB), mib(last.rssKiB), first.fds, peak.fds, last.fds, firstGr, peak.gr, last.gr)
	}
}

// startNginx runs nginx round-robin over the replicas' fixed ports until
// the test ends, and returns its MCP endpoint.
func startNginx(t *testing.T, reps []*replica) string {
	bin := harness.NginxBinary(t)
	port := harness.FreePort(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // nginx's workers, if run as root, are another user
		t.Fatal(err)
	}
	var servers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&servers, "\t\tserver 127.0.0.1:%d max_fails=1 fail_timeout=2s;\n", r.port)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, harness.NginxConf, dir, port, servers.String(), ""), 0o644); err != nil {
		t.Fatal(err)
	}
	harness.RunBalancer(t, exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off;"), port, nil)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}
