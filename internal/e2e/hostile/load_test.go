package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"mcpx/internal/apitype"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
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
	meta := `{"` + harness.MarkerKey + `":"` + c.marker() + `"`
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
		var g harness.LoadGateway
		if mode == mcpxtest.InProcess {
			g = harness.InProcessGateway(t, e, cfgPath)
		} else {
			g = harness.DaemonGateway(t, e, cfgPath)
		}

		// Every host connected and initialized; every upstream started.
		hosts := []*harness.LoadHost{g.Connect()}
		hosts[0].Initialize()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range loadHosts - 1 {
			wg.Go(func() {
				h := g.Connect()
				h.Initialize()
				mu.Lock()
				hosts = append(hosts, h)
				mu.Unlock()
			})
		}
		wg.Wait()
		for i := range loadUpstreams {
			k := -1 - i
			m := hosts[0].Call(k, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(k)+`,"method":"tools/call","params":{"name":"u`+strconv.Itoa(i)+`__echo","arguments":{}}}`))
			if m.Error != nil {
				t.Fatalf("warm-up call to u%d: %s", i, m.Encode())
			}
		}
		st := g.Status()
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
					h.Mu.Lock()
					h.Sent[c.k] = time.Now()
					h.Mu.Unlock()
					h.Write(c.request())
					if c.cancelAt >= 0 {
						cancels.Add(1)
						time.AfterFunc(c.cancelAt, func() {
							defer cancels.Done()
							h.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.Itoa(c.k) + `,"reason":"load test"}}`))
						})
					}
				}
			})
		}
		wg.Wait()
		cancels.Wait()

		// Every call not cancelled gets its answer.
		hostOf := func(c loadCall) *harness.LoadHost { return hosts[c.k/loadPerHost] }
		deadline := time.Now().Add(45 * time.Second)
		for {
			missing := 0
			for _, c := range calls {
				h := hostOf(c)
				h.Mu.Lock()
				if c.cancelAt < 0 && len(h.Responses[c.k]) == 0 {
					missing++
				}
				h.Mu.Unlock()
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
			h.Mu.Lock()
			if at, ok := h.Answered[c.k]; ok {
				latencies = append(latencies, at.Sub(h.Sent[c.k]))
				if at.After(last) {
					last = at
				}
			}
			h.Mu.Unlock()
		}
		wall := last.Sub(start)
		time.Sleep(2 * harness.Settle) // a second answer, late progress, would show by now

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
						_ = json.Unmarshal(meta[harness.MarkerKey], &marker)
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
				h.Mu.Lock()
				answered := len(h.Responses[c.k]) > 0
				h.Mu.Unlock()
				v, reached := view[c.marker()]
				if c.cancelAt >= 0 && !answered && reached && !v.cancelled && v.outcome != demo.OutcomeResult {
					out = append(out, c.marker())
				}
			}
			return out
		}
		for end := time.Now().Add(harness.WaitLong); len(unsettled()) > 0 && time.Now().Before(end); {
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
			h.Mu.Lock()
			rs := h.Responses[c.k]
			h.Mu.Unlock()
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
			h.Mu.Lock()
			progress += h.Progress
			for _, l := range h.Late {
				t.Errorf("progress after its call's response: %s", l)
			}
			h.Mu.Unlock()
		}

		// The hosts leave; nothing of theirs stays.
		for _, h := range hosts {
			wg.Go(h.Leave)
		}
		wg.Wait()
		var after *apitype.Status
		for end := time.Now().Add(harness.WaitLong); ; time.Sleep(20 * time.Millisecond) {
			after = g.Status()
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
			harness.Quantile(latencies, 0.5).Round(time.Millisecond), harness.Quantile(latencies, 0.9).Round(time.Millisecond),
			harness.Quantile(latencies, 0.99).Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
		t.Logf("%s: %d results (%d of them to calls whose cancel came too late); %d cancelled calls unanswered: %d never sent upstream, %d cancelled upstream, %d finished upstream before the cancel; %d progress notifications",
			mode, results, answeredCancelled, silentCancelled, neverSent, cancelledUpstream, finishedFirst, progress)
		if mode == mcpxtest.InProcess {
			g.Stop()
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
