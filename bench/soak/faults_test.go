package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// The fault soak: two replicas (`mcpx serve --http`) share one
// PostgreSQL behind nginx; hosts make plain calls and start jobs
// (2026-07-28 tasks of the demo's wait, not idempotent, and sleep_then,
// idempotent) through it, while faults come in turn: replica A cut off
// from PostgreSQL (a proxy black-holes its traffic, no reset) for three
// lease terms, then replica B killed with SIGKILL and started again (A
// lives through the run, so that its samples show growth under faults).
// Every few seconds each replica's resident memory, descriptors and
// goroutines are sampled (faultssample_test.go). At the end every job is
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
		e.Vars["GODEBUG"] = schedTrace // the replica's goroutines, on its stderr
		cfg := e.WriteConfig(map[string]any{"store": store, "http": map[string]any{"allowedHosts": []string{"127.0.0.1"}},
			"jobs": map[string]any{"leaseTerm": soakLease.String()}},
			mcpxtest.Demo{Name: "demo", Fields: map[string]any{"env": map[string]any{"GODEBUG": "schedtrace=0"}}})
		r := &replica{name: string(rune('A' + i)), env: e, cfg: cfg, port: harness.FreePort(t)}
		s.reps = append(s.reps, r)
		s.start(r)
	}
	s.front = startNginx(t, s.reps)
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
	stopSampling := s.sampleEvery(sampleEvery)
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
		// B killed, and started again.
		r := s.reps[1]
		s.note("kill -9 " + r.name)
		s.kill(r)
		time.Sleep(soakLease)
		s.start(r)
		time.Sleep(3 * soakLease)
	}
	close(stop)
	wg.Wait()
	stopSampling()
	s.sample("end")
	s.settle()
	s.report()
}

// replica is one `mcpx serve --http`, started again after a kill.
type replica struct {
	name  string
	env   *mcpxtest.Env
	cfg   string
	port  int // the same at every start: nginx names it
	mu    sync.Mutex
	cmd   *exec.Cmd
	url   string
	kills []time.Time
	// what its samples read (faultssample_test.go)
	starts  int
	gor     int // live goroutines at the last complete schedtrace
	counted int // the schedtrace being read
	samples []usage
}

func (s *soak) start(r *replica) {
	t := s.t
	cmd := exec.Command(r.env.Bin, "serve", "--config", r.cfg, "--http", fmt.Sprintf("127.0.0.1:%d", r.port), "--log-level", "warn")
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
			} else if r.schedLine(l) {
				continue
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
		r.starts++
		r.gor, r.counted = 0, 0
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
