package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/localclient"
	"mcpx/internal/mcpxtest"
)

// The load test: 1,000 concurrent calls across 10 upstreams (demo
// processes) from 20 hosts, a fifth of them cancelled by their host at a
// random moment, against one gateway with the default limits (64 call
// slots and a queue of 256 per upstream, 256 requests per host), so that
// each upstream's 100 calls fill its slots and queue the rest.
//
// In-process, the gateway is daemon.Run in this test process, and the hosts
// are host streams on its socket (what `mcpx serve` opens), so that goleak
// sees every goroutine of the gateway end. In daemon mode the hosts are 20
// `mcpx serve` processes forwarding to one daemon process.
//
// What it asserts: every call ends exactly once (one result, or, for a
// cancelled call, one result that beat the cancel or nothing at all);
// nothing of a call reaches its host after its response; every cancelled
// call that reached its upstream was cancelled there or had finished; no
// call that was not cancelled is cancelled upstream; once the hosts have
// left, no call is registered, queued or pending upstream; in-process, no
// goroutine of the gateway outlives it. What it reports: calls per second,
// latency quantiles, goroutines (in-process) and RSS before, at the peak
// and after. It asserts no time or memory bound.
const (
	loadUpstreams = 10
	loadHosts     = 20
	loadCalls     = 1000 // loadHosts * loadPerHost
	loadPerHost   = loadCalls / loadHosts
	loadCancelled = loadCalls / 5
)

// loadCall is one planned call: call k goes to upstream k%10, from host
// k/50; even calls are echo, odd ones a half-second export with progress.
type loadCall struct {
	k        int
	upstream string
	export   bool
	cancelAt time.Duration // after sending; < 0: never cancelled
}

func (c loadCall) marker() string { return "L" + strconv.Itoa(c.k) }

func (c loadCall) request() []byte {
	args := `{"k":` + strconv.Itoa(c.k) + `}`
	name := c.upstream + "__echo"
	if c.export {
		args, name = `{"seconds":0.5,"steps":5}`, c.upstream+"__export"
	}
	meta := `{"` + markerKey + `":"` + c.marker() + `"`
	if c.export {
		meta += `,"progressToken":"p` + strconv.Itoa(c.k) + `"`
	}
	meta += "}"
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(c.k) + `,"method":"tools/call","params":{"name":"` + name +
		`","arguments":` + args + `,"_meta":` + meta + `}}`)
}

func planLoad() []loadCall {
	rng := rand.New(rand.NewPCG(6, 1000))
	calls := make([]loadCall, loadCalls)
	for k := range calls {
		calls[k] = loadCall{k: k, upstream: fmt.Sprint("u", k%loadUpstreams), export: k%2 == 1, cancelAt: -1}
	}
	for _, k := range rng.Perm(loadCalls)[:loadCancelled] {
		calls[k].cancelAt = time.Duration(rng.IntN(400)) * time.Millisecond
	}
	return calls
}

// loadHost is a raw JSON-RPC host that keeps, per call, every response
// and when the first came.
type loadHost struct {
	t        *testing.T
	w        io.Writer
	wmu      sync.Mutex
	leave    func() // ends the host's side, waits for the stream's end
	readDone chan struct{}

	mu        sync.Mutex
	sent      map[int]time.Time
	responses map[int][]*jsonrpc.Message
	answered  map[int]time.Time
	progress  int
	late      []string // progress after its call's response
	initDone  chan struct{}
}

func newLoadHost(t *testing.T, r io.Reader, w io.Writer, leave func()) *loadHost {
	h := &loadHost{t: t, w: w, leave: leave, readDone: make(chan struct{}), initDone: make(chan struct{}),
		sent: map[int]time.Time{}, responses: map[int][]*jsonrpc.Message{}, answered: map[int]time.Time{}}
	go h.read(r)
	return h
}

func (h *loadHost) write(line []byte) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if _, err := h.w.Write(append(line, '\n')); err != nil {
		h.t.Errorf("writing to mcpx: %v", err)
	}
}

func (h *loadHost) read(r io.Reader) {
	defer close(h.readDone)
	jr := jsonrpc.NewReader(r, 64<<20)
	for {
		line, err := jr.ReadLine()
		if err != nil {
			return
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil {
			h.t.Errorf("mcpx sent a malformed message %q: %v", line, err)
			continue
		}
		now := time.Now()
		switch {
		case msg.IsResponse() && msg.ID.String() == `"init"`:
			close(h.initDone)
		case msg.IsResponse():
			k, _ := msg.ID.Int()
			h.mu.Lock()
			if len(h.responses[int(k)]) == 0 {
				h.answered[int(k)] = now
			}
			h.responses[int(k)] = append(h.responses[int(k)], msg)
			h.mu.Unlock()
		case msg.Method == "notifications/progress":
			var p struct {
				Token string `json:"progressToken"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			k, _ := strconv.Atoi(strings.TrimPrefix(p.Token, "p"))
			h.mu.Lock()
			h.progress++
			if len(h.responses[k]) > 0 {
				h.late = append(h.late, string(line))
			}
			h.mu.Unlock()
		}
	}
}

func (h *loadHost) initialize() {
	h.write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`))
	select {
	case <-h.initDone:
	case <-time.After(waitLong):
		h.t.Fatal("no answer to initialize")
	}
	h.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
}

// call sends one request with id k and waits for its answer (warm-up).
func (h *loadHost) call(k int, line []byte) *jsonrpc.Message {
	h.write(line)
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		rs := h.responses[k]
		h.mu.Unlock()
		if len(rs) > 0 {
			return rs[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("no answer to warm-up request %d", k)
	return nil
}

// procStatus reads fields of /proc/<pid>/status ("VmRSS", "VmHWM",
// "Threads"), numbers only, kB for sizes.
func procStatus(pid int, fields ...string) map[string]int {
	out := map[string]int{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if ok && slices.Contains(fields, name) {
			n, _ := strconv.Atoi(strings.Fields(val)[0])
			out[name] = n
		}
	}
	return out
}

func mib(kb int) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// loadGateway is mcpx under load: how to connect a host, and how to see it.
type loadGateway struct {
	connect func() *loadHost
	status  func() *apitype.Status
	stop    func() // in-process: stops the daemon and waits for it
}

func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test takes a few seconds per mode")
	}
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		var leaks []goleak.Option
		if mode == mcpxtest.InProcess {
			leaks = []goleak.Option{goleak.IgnoreCurrent()}
		}
		e := mcpxtest.NewEnv(t)
		var demos []mcpxtest.Demo
		for i := range loadUpstreams {
			demos = append(demos, mcpxtest.Demo{Name: fmt.Sprint("u", i)})
		}
		cfgPath := e.WriteConfig(nil, demos...)
		var g loadGateway
		if mode == mcpxtest.InProcess {
			g = inProcessGateway(t, e, cfgPath)
		} else {
			g = daemonGateway(t, e, cfgPath)
		}

		// Every host connected and initialized; every upstream started.
		hosts := []*loadHost{g.connect()}
		hosts[0].initialize()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range loadHosts - 1 {
			wg.Go(func() {
				h := g.connect()
				h.initialize()
				mu.Lock()
				hosts = append(hosts, h)
				mu.Unlock()
			})
		}
		wg.Wait()
		for i := range loadUpstreams {
			k := -1 - i
			m := hosts[0].call(k, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(k)+`,"method":"tools/call","params":{"name":"u`+strconv.Itoa(i)+`__echo","arguments":{}}}`))
			if m.Error != nil {
				t.Fatalf("warm-up call to u%d: %s", i, m.Encode())
			}
		}
		st := g.status()
		pid := st.PID
		rssBefore := procStatus(pid, "VmRSS")["VmRSS"]
		goBefore := runtime.NumGoroutine()

		// Sample the gateway's RSS (and, in-process, goroutines) as it runs.
		stopSampling := make(chan struct{})
		sampled := make(chan [2]int, 1)
		go func() {
			peakRSS, peakGo := rssBefore, goBefore
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stopSampling:
					sampled <- [2]int{peakRSS, peakGo}
					return
				case <-tick.C:
				}
				peakRSS = max(peakRSS, procStatus(pid, "VmRSS")["VmRSS"])
				peakGo = max(peakGo, runtime.NumGoroutine())
			}
		}()

		// The burst: every host sends its 50 calls at once, then cancels
		// its chosen ones, each at its moment.
		calls := planLoad()
		start := time.Now()
		var cancels sync.WaitGroup
		for hi, h := range hosts {
			wg.Go(func() {
				for _, c := range calls[hi*loadPerHost : (hi+1)*loadPerHost] {
					h.mu.Lock()
					h.sent[c.k] = time.Now()
					h.mu.Unlock()
					h.write(c.request())
					if c.cancelAt >= 0 {
						cancels.Add(1)
						time.AfterFunc(c.cancelAt, func() {
							defer cancels.Done()
							h.write([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.Itoa(c.k) + `,"reason":"load test"}}`))
						})
					}
				}
			})
		}
		wg.Wait()
		cancels.Wait()

		// Every call not cancelled gets its answer.
		hostOf := func(c loadCall) *loadHost { return hosts[c.k/loadPerHost] }
		deadline := time.Now().Add(45 * time.Second)
		for {
			missing := 0
			for _, c := range calls {
				h := hostOf(c)
				h.mu.Lock()
				if c.cancelAt < 0 && len(h.responses[c.k]) == 0 {
					missing++
				}
				h.mu.Unlock()
			}
			if missing == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d calls not cancelled got no answer within 45s", missing)
			}
			time.Sleep(10 * time.Millisecond)
		}
		var last time.Time
		var latencies []time.Duration
		for _, c := range calls {
			h := hostOf(c)
			h.mu.Lock()
			if at, ok := h.answered[c.k]; ok {
				latencies = append(latencies, at.Sub(h.sent[c.k]))
				if at.After(last) {
					last = at
				}
			}
			h.mu.Unlock()
		}
		wall := last.Sub(start)
		time.Sleep(2 * settle) // a second answer, late progress, would show by now

		// Exactly once, in order, and what the upstreams saw.
		records := map[string][]demo.Event{}
		for i := range loadUpstreams {
			name := fmt.Sprint("u", i)
			records[name] = e.Records(name)
		}
		type upstreamView struct {
			id        string
			cancelled bool
			outcome   string
		}
		viewOf := func() map[string]upstreamView { // marker -> what its upstream saw
			view := map[string]upstreamView{}
			for name, evs := range records {
				byID := map[string]string{} // upstream id -> marker
				for _, ev := range evs {
					if ev.Event == demo.EventRequest && ev.Method == "tools/call" {
						var meta map[string]json.RawMessage
						_ = json.Unmarshal(ev.Meta, &meta)
						var marker string
						_ = json.Unmarshal(meta[markerKey], &marker)
						if marker != "" {
							byID[name+string(ev.ID)] = marker
							view[marker] = upstreamView{id: string(ev.ID)}
						}
					}
				}
				for _, ev := range evs {
					switch ev.Event {
					case demo.EventCancelled:
						if m, ok := byID[name+string(ev.RequestID)]; ok {
							v := view[m]
							v.cancelled = true
							view[m] = v
						}
					case demo.EventFinished:
						if m, ok := byID[name+string(ev.ID)]; ok {
							v := view[m]
							v.outcome = ev.Outcome
							view[m] = v
						}
					}
				}
			}
			return view
		}
		view := viewOf()
		// A cancelled call that reached its upstream and has not finished
		// there must get its cancellation: wait for the records.
		unsettled := func() []string {
			var out []string
			for _, c := range calls {
				h := hostOf(c)
				h.mu.Lock()
				answered := len(h.responses[c.k]) > 0
				h.mu.Unlock()
				v, reached := view[c.marker()]
				if c.cancelAt >= 0 && !answered && reached && !v.cancelled && v.outcome != demo.OutcomeResult {
					out = append(out, c.marker())
				}
			}
			return out
		}
		for end := time.Now().Add(waitLong); len(unsettled()) > 0 && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
			for i := range loadUpstreams {
				name := fmt.Sprint("u", i)
				records[name] = e.Records(name)
			}
			view = viewOf()
		}
		if u := unsettled(); len(u) > 0 {
			t.Errorf("%d cancelled calls reached their upstream and were neither cancelled nor finished there, e.g. %s", len(u), u[0])
		}

		var results, answeredCancelled, silentCancelled, neverSent, cancelledUpstream, finishedFirst, progress int
		for _, c := range calls {
			h := hostOf(c)
			h.mu.Lock()
			rs := h.responses[c.k]
			h.mu.Unlock()
			v, reached := view[c.marker()]
			switch {
			case len(rs) > 1:
				t.Errorf("call %d answered %d times: %s", c.k, len(rs), rs[1].Encode())
			case len(rs) == 1 && rs[0].Error != nil:
				t.Errorf("call %d (%s, cancelled %v) failed: %s", c.k, c.upstream, c.cancelAt >= 0, rs[0].Encode())
			case len(rs) == 1:
				want := `\"k\":` + strconv.Itoa(c.k)
				if c.export {
					want = "exported"
				}
				if !strings.Contains(string(rs[0].Result), want) {
					t.Errorf("call %d: result %s lacks %s", c.k, rs[0].Result, want)
				}
				results++
				if c.cancelAt >= 0 {
					answeredCancelled++
				}
			case c.cancelAt < 0:
				t.Errorf("call %d was not cancelled and got no answer", c.k)
			default:
				silentCancelled++
				switch {
				case !reached:
					neverSent++ // cancelled before it went upstream (queued, say)
				case v.cancelled:
					cancelledUpstream++
				default:
					finishedFirst++ // its result beat the cancel upstream; the host hears nothing
				}
			}
			if c.cancelAt < 0 {
				if !reached {
					t.Errorf("call %d was answered but its upstream has no record of it", c.k)
				} else if v.cancelled {
					t.Errorf("call %d was not cancelled by its host, but its upstream got a cancellation", c.k)
				}
			}
		}
		for _, h := range hosts {
			h.mu.Lock()
			progress += h.progress
			for _, l := range h.late {
				t.Errorf("progress after its call's response: %s", l)
			}
			h.mu.Unlock()
		}

		// The hosts leave; nothing of theirs stays.
		for _, h := range hosts {
			wg.Go(h.leave)
		}
		wg.Wait()
		var after *apitype.Status
		for end := time.Now().Add(waitLong); ; time.Sleep(20 * time.Millisecond) {
			after = g.status()
			busy := len(after.Calls) > 0 || after.Hosts > 0
			for _, u := range after.Upstreams {
				busy = busy || u.InFlight+u.Queued+u.Pending > 0
			}
			if !busy {
				break
			}
			if time.Now().After(end) {
				t.Errorf("after the hosts left: %d hosts, %d calls registered, upstreams %+v; want none busy", after.Hosts, len(after.Calls), after.Upstreams)
				break
			}
		}
		close(stopSampling)
		peak := <-sampled
		rssAfter := procStatus(pid, "VmRSS", "VmHWM", "Threads")
		goAfterHosts := runtime.NumGoroutine()

		slices.Sort(latencies)
		t.Logf("%s: %d calls (%d echo, %d half-second exports) to %d upstreams from %d hosts in %v: %.0f calls/s; latency p50 %v, p90 %v, p99 %v, max %v",
			mode, loadCalls, loadCalls/2, loadCalls/2, loadUpstreams, loadHosts, wall.Round(time.Millisecond), float64(loadCalls)/wall.Seconds(),
			quantile(latencies, 0.5).Round(time.Millisecond), quantile(latencies, 0.9).Round(time.Millisecond),
			quantile(latencies, 0.99).Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
		t.Logf("%s: %d results (%d of them to calls whose cancel came too late); %d cancelled calls unanswered: %d never sent upstream, %d cancelled upstream, %d finished upstream before the cancel; %d progress notifications",
			mode, results, answeredCancelled, silentCancelled, neverSent, cancelledUpstream, finishedFirst, progress)
		if mode == mcpxtest.InProcess {
			g.stop()
			goleak.VerifyNone(t, leaks...)
			t.Logf("%s: goroutines (test process) before %d, peak %d, after the hosts left %d, after the gateway stopped %d; RSS (test process, gateway and hosts) before %s, peak sampled %s, after %s",
				mode, goBefore, peak[1], goAfterHosts, runtime.NumGoroutine(), mib(rssBefore), mib(peak[0]), mib(rssAfter["VmRSS"]))
		} else {
			hwm := max(peak[0], rssAfter["VmHWM"])
			t.Logf("%s: daemon pid %d: RSS before %s, peak %s (VmHWM), after %s; %d threads after",
				mode, pid, mib(rssBefore), mib(hwm), mib(rssAfter["VmRSS"]), rssAfter["Threads"])
			// A sanity bound, far above what it takes (tens of MiB, a few
			// hundred under the race detector): memory that grows with the
			// calls made would cross it.
			if hwm > 1<<20 {
				t.Errorf("the daemon's RSS peaked at %s under load", mib(hwm))
			}
		}
	})
}

// inProcessGateway runs daemon.Run in the test process.
func inProcessGateway(t *testing.T, e *mcpxtest.Env, cfgPath string) loadGateway {
	cfg := e.LoadConfig(cfgPath)
	paths, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		t.Fatal(err)
	}
	files := paths.Daemon(cfg.File, "load-test")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, &daemon.Options{Config: cfg, Version: "test", Logger: log, Files: files})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon.Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the in-process daemon did not stop within 30s")
		}
	}
	t.Cleanup(stop)
	client := &localclient.Client{Socket: files.Socket, Version: "test"}
	status := func() *apitype.Status {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := client.Status(ctx)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		return st
	}
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := client.Status(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the in-process daemon did not answer within 15s: %v", err)
		}
	}
	connect := func() *loadHost {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := client.DialHost(ctx)
		if err != nil {
			t.Fatalf("connecting a host: %v", err)
		}
		var h *loadHost
		h = newLoadHost(t, s, s, func() {
			_ = s.CloseWrite()
			select {
			case <-h.readDone:
			case <-time.After(waitLong):
				t.Errorf("mcpx did not end a host's stream within %v of the host leaving", waitLong)
			}
			s.Close()
		})
		return h
	}
	return loadGateway{connect: connect, status: status, stop: stop}
}

// daemonGateway makes every host an `mcpx serve` process.
func daemonGateway(t *testing.T, e *mcpxtest.Env, cfgPath string) loadGateway {
	connect := func() *loadHost {
		cmd := exec.Command(e.Bin, "serve", "--config", cfgPath, "--log-level", "warn")
		cmd.Env = e.Environ()
		cmd.Stderr = os.Stderr
		stdin, stdout := startPiped(t, cmd)
		var h *loadHost
		h = newLoadHost(t, stdout, stdin, func() {
			stdin.Close()
			waited := make(chan error, 1)
			go func() { <-h.readDone; waited <- cmd.Wait() }()
			select {
			case <-waited:
			case <-time.After(waitLong):
				cmd.Process.Kill()
				<-waited
				t.Errorf("mcpx serve did not exit within %v of its stdin closing", waitLong)
			}
		})
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
			}
		})
		return h
	}
	status := func() *apitype.Status {
		st := statusJSON(t, e, cfgPath)
		return &st
	}
	return loadGateway{connect: connect, status: status}
}
