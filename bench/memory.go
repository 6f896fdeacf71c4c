package main

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/demo"
)

// memResult is the mcpx daemon's memory under load. Each figure has a
// fresh daemon of its own, so that nothing an earlier one did stays in its
// heap (the Go runtime returns freed memory to the system only slowly).
type memResult struct {
	idle   memory // one host came and went; the upstream runs
	hosts  memStep
	http   memStep
	calls  memStep
	peak   int64 // the highest VmHWM of the daemons
	errs   []string
	limits bool // the call limits were raised for the calls in flight
}

// memStep is the daemon's RSS before and with n of something.
type memStep struct {
	before, with memory
	n            int
}

// perItem is the RSS each item adds, in bytes.
func (s memStep) perItem() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.with.RSS-s.before.RSS) / float64(s.n)
}

// settle waits for the daemon's memory to stop moving and returns the
// median of a few samples.
func settle(pid int) memory {
	time.Sleep(500 * time.Millisecond)
	var rss []int64
	var last memory
	for range 5 {
		m, err := memOf(pid)
		if err == nil {
			rss = append(rss, m.RSS)
			last = m
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(rss) == 0 {
		return memory{}
	}
	slices.Sort(rss)
	last.RSS = rss[len(rss)/2]
	return last
}

// memDaemon is a fresh mcpx daemon with its own demo, after one host has
// made a few calls (so that the upstream runs) and left.
type memDaemon struct {
	mcpx   string
	proc   *spawned
	config string
	record string
	url    string
}

func (b *bench) startMemDaemon(name string, limits bool) (*memDaemon, error) {
	d := &memDaemon{mcpx: b.mcpx, record: b.recordFile(name)}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	settings := map[string]any{"http": map[string]any{"listen": addr}}
	if limits {
		// The default limits (64 calls in flight per server, 256 per host)
		// would queue or refuse most of the calls.
		settings["maxConcurrentCalls"] = 2 * b.cfg.memCalls
		settings["maxCallsPerHost"] = 2 * b.cfg.memCalls
	}
	if d.config, err = b.writeConfig(name, b.stdioServer(d.record), settings); err != nil {
		return nil, err
	}
	if d.proc, err = spawn(b.logs, "mcpx-daemon-"+name, []string{b.mcpx, "daemon", "--config", d.config, "--log-level", "warn"}, spawnOpts{env: b.env}); err != nil {
		return nil, err
	}
	if err := waitPort(addr, 30*time.Second, d.proc.proc); err != nil {
		d.proc.stop(5 * time.Second)
		return nil, fmt.Errorf("mcpx daemon: %w", err)
	}
	d.url = "http://" + addr + "/mcp"
	p := &path{tools: "demo__"}
	s, err := b.stdioPath(p, name+"-first-host", d.serve())
	if err == nil {
		err = warm(p, 20, 1)
		p.h.close()
		s.stop(5 * time.Second)
	}
	if err != nil {
		d.proc.stop(5 * time.Second)
		return nil, fmt.Errorf("first host: %w", err)
	}
	return d, nil
}

// serve is the command line of a host of the daemon.
func (d *memDaemon) serve() []string { return []string{d.mcpx, "serve", "--config", d.config} }

func (d *memDaemon) stop(res *memResult) {
	if m, err := memOf(d.proc.pid()); err == nil {
		res.peak = max(res.peak, m.Peak)
	}
	d.proc.stop(10 * time.Second)
}

func (b *bench) memoryPhase() *memResult {
	res := &memResult{limits: b.hasCallLimits()}
	fail := func(format string, args ...any) *memResult {
		res.errs = append(res.errs, fmt.Sprintf(format, args...))
		return res
	}

	// Idle, then idle stdio hosts: mcpx serve processes, each initialized.
	d, err := b.startMemDaemon("mem-hosts", false)
	if err != nil {
		return fail("%v", err)
	}
	res.idle = settle(d.proc.pid())
	res.hosts = memStep{before: res.idle, n: b.cfg.memHosts}
	var hosts []*spawned
	var hs []host
	argv := d.serve()
	for i := range b.cfg.memHosts {
		q := &path{}
		s, err := b.stdioPath(q, fmt.Sprintf("mem-host-%d", i+1), argv)
		if err != nil {
			d.stop(res)
			return fail("host %d: %v", i+1, err)
		}
		hosts, hs = append(hosts, s), append(hs, q.h)
	}
	res.hosts.with = settle(d.proc.pid())
	var wg sync.WaitGroup
	for i := range hosts {
		wg.Go(func() { hs[i].close(); hosts[i].stop(5 * time.Second) })
	}
	wg.Wait()
	d.stop(res)

	// Idle HTTP hosts: legacy sessions on the daemon's listener.
	if d, err = b.startMemDaemon("mem-http", false); err != nil {
		return fail("%v", err)
	}
	tok, err := b.mcpxOutput("token")
	if err != nil {
		d.stop(res)
		return fail("%v", err)
	}
	res.http = memStep{before: settle(d.proc.pid()), n: b.cfg.memHosts}
	var sessions []*httpHost
	for i := range b.cfg.memHosts {
		h, err := newHTTPHost(d.url, trimSpace(tok), false)
		if err != nil {
			d.stop(res)
			return fail("HTTP session %d: %v", i+1, err)
		}
		sessions = append(sessions, h)
	}
	res.http.with = settle(d.proc.pid())
	for _, h := range sessions {
		h.close()
	}
	d.stop(res)

	// Calls in flight: one host, M silent waits.
	if d, err = b.startMemDaemon("mem-calls", res.limits); err != nil {
		return fail("%v", err)
	}
	defer d.stop(res)
	p := &path{tools: "demo__"}
	s, err := b.stdioPath(p, "mem-calls-host", d.serve())
	if err != nil {
		return fail("%v", err)
	}
	defer s.stop(5 * time.Second)
	tail, err := openTail(d.record)
	if err != nil {
		return fail("%v", err)
	}
	defer tail.close()
	res.calls = memStep{before: settle(d.proc.pid()), n: b.cfg.memCalls}
	var calls []*call
	for i := range b.cfg.memCalls {
		c, err := p.h.start(p.tool("wait"), []byte(`{"seconds":300,"text":"m-`+strconv.Itoa(i)+`"}`), startOpts{})
		if err != nil {
			return fail("call %d: %v", i, err)
		}
		calls = append(calls, c)
	}
	for i := range b.cfg.memCalls {
		if _, err := tail.await(func(e *demo.Event) bool { return e.Event == demo.EventRequest && e.Tool == "wait" }, 30*time.Second); err != nil {
			return fail("the upstream got %d of %d calls: %v", i, b.cfg.memCalls, err)
		}
	}
	res.calls.with = settle(d.proc.pid())
	for _, c := range calls {
		c.cancel()
		c.abandon()
	}
	p.h.close()
	return res
}

// hasCallLimits reports whether the mcpx under test knows the call limit
// settings: a config that sets them loads (status then fails for want of
// a daemon, exit code 3, not for the config, exit code 2).
func (b *bench) hasCallLimits() bool {
	cfg, err := b.writeConfig("probe-limits", b.stdioServer(b.recordFile("probe")), map[string]any{"maxConcurrentCalls": 1, "maxCallsPerHost": 1})
	if err != nil {
		return false
	}
	cmd := exec.Command(b.mcpx, "status", "--config", cfg)
	cmd.Env = b.env
	err = cmd.Run()
	var ee *exec.ExitError
	return err == nil || errors.As(err, &ee) && ee.ExitCode() != 2
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
