package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// The fault soak: two replicas (`mcpx serve --http`) share one
// PostgreSQL; hosts make plain calls and start jobs (2026-07-28 tasks of
// the demo's wait, not idempotent, and sleep_then, idempotent) on either,
// while faults come in turn: replica A cut off from PostgreSQL (a proxy
// black-holes its traffic, no reset) for three lease terms, then a
// replica killed with SIGKILL and started again. At the end every job is
// read until it ends, and the upstreams' records (each call carries its
// job's tag in _meta) say how often, where and when each ran. It asserts
// that no call of a job ran twice at once, no plain job ran twice, and no
// result an upstream gave a live replica was lost (the job's result, or
// its late result); it prints the table docs/benchmarks.md holds. Not
// part of CI:
//
//	go test ./bench/soak -run TestFaultSoak -faults -timeout 30m          # 10 minutes
//	go test ./bench/soak -run TestFaultSoak -faults -duration 2m -v
var (
	faults   = flag.Bool("faults", false, "run the fault soak (TestFaultSoak)")
	duration = flag.Duration("duration", 10*time.Minute, "how long the fault soak's load runs")
)

func TestMain(m *testing.M) { mcpxtest.Main(m) }

const soakLease = 3 * time.Second

func TestFaultSoak(t *testing.T) {
	if !*faults {
		t.Skip("the fault soak runs with -faults")
	}
	pg := storetest.PostgresURL(t)
	tp := mcpxtest.StartToxiproxy(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxied := *u
	proxied.Host = tp.Proxy("pg", u.Host)
	s := &soak{t: t}
	for i, store := range []string{proxied.String(), pg} {
		e := mcpxtest.NewEnv(t)
		if i > 0 {
			e.Vars["XDG_STATE_HOME"] = s.reps[0].env.Vars["XDG_STATE_HOME"]
		}
		cfg := e.WriteConfig(map[string]any{"store": store, "http": map[string]any{"allowedHosts": []string{"127.0.0.1"}},
			"jobs": map[string]any{"leaseTerm": soakLease.String()}}, mcpxtest.Demo{Name: "demo"})
		r := &replica{name: string(rune('A' + i)), env: e, cfg: cfg}
		s.reps = append(s.reps, r)
		s.start(r)
	}
	if s.token, err = config.Token(s.reps[0].env.Vars["XDG_STATE_HOME"] + "/mcpx/token"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range s.reps {
			r.mu.Lock()
			if r.cmd != nil {
				_ = r.cmd.Process.Kill()
			}
			r.mu.Unlock()
		}
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); s.jobWorker(w, stop) }()
	}
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); s.callWorker(stop) }()
	}
	began := time.Now()
	s.sample("start")
	for cycle := 0; time.Since(began) < *duration; cycle++ {
		// A cut off from the store for three lease terms, while B reaches it.
		s.note("partition A")
		tp.AddToxic("pg", "cut-down", "timeout", false, map[string]any{"timeout": 0})
		tp.AddToxic("pg", "cut-up", "timeout", true, map[string]any{"timeout": 0})
		time.Sleep(3 * soakLease)
		tp.RemoveToxic("pg", "cut-down")
		tp.RemoveToxic("pg", "cut-up")
		s.partitions++
		time.Sleep(2 * soakLease)
		// One replica killed, in turn, and started again.
		r := s.reps[cycle%2]
		s.note("kill -9 " + r.name)
		s.kill(r)
		time.Sleep(soakLease)
		s.start(r)
		time.Sleep(3 * soakLease)
	}
	close(stop)
	wg.Wait()
	s.sample("end")
	s.settle()
	s.report()
}

// replica is one `mcpx serve --http`, started again after a kill.
type replica struct {
	name  string
	env   *mcpxtest.Env
	cfg   string
	mu    sync.Mutex
	cmd   *exec.Cmd
	url   string
	kills []time.Time
}

func (r *replica) current() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url, r.cmd != nil
}

func (s *soak) start(r *replica) {
	t := s.t
	cmd := exec.Command(r.env.Bin, "serve", "--config", r.cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = r.env.Environ()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if u, ok := strings.CutPrefix(l, "mcpx: serving MCP at "); ok {
				urlc <- u
			} else if testing.Verbose() {
				t.Log(r.name + ": " + l)
			}
			s.logLine(r.name, l)
		}
		_ = cmd.Wait()
	}()
	select {
	case u := <-urlc:
		r.mu.Lock()
		r.cmd, r.url = cmd, u
		r.mu.Unlock()
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s printed no URL within 60 s", r.name)
	}
}

func (s *soak) kill(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	r.kills = append(r.kills, time.Now())
	r.cmd = nil
	s.kills++
}

// sample notes each replica's resident memory and descriptors.
func (s *soak) sample(when string) {
	for _, r := range s.reps {
		r.mu.Lock()
		cmd := r.cmd
		r.mu.Unlock()
		if cmd == nil {
			continue
		}
		pid := cmd.Process.Pid
		rss := ""
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
					rss = strings.TrimSpace(v)
				}
			}
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		s.note(fmt.Sprintf("%s: replica %s rss %s, %d descriptors", when, r.name, rss, len(fds)))
	}
}
