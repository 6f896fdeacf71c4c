package main

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/demo"
)

// round is what one round measured on one path.
type round struct {
	lat1, lat32     []time.Duration // per-call latency, 1 and N in flight
	tput            float64         // calls/s with N in flight
	cpu1, cpu32     time.Duration   // gateway CPU over those phases
	calls1, calls32 int
	// host32 and up32 are the bench's own CPU (the host) and the
	// upstream's over the N-in-flight phase: where the rest went.
	host32, up32 time.Duration

	bursts    []time.Duration // request to result, per burst
	delivered []float64       // share of the notifications before the result
	ordered   []bool          // what was delivered was strictly increasing
	late      int             // progress after the result

	cancels []time.Duration // host cancel -> upstream saw it
	missed  int             // cancels the upstream never saw

	jobs *jobRound // nil: the path has no job figure

	errs []string
}

func (r *round) fail(format string, args ...any) {
	if len(r.errs) < 5 {
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
	}
}

// seq makes every call's arguments distinct.
var seq atomic.Int64

// echo makes one echo call with distinct arguments and checks the result.
func echo(p *path) (*call, error) {
	args, want := p.echoArgs(seq.Add(1))
	c, err := p.h.start(p.tool("echo"), args, startOpts{})
	if err != nil {
		return nil, err
	}
	res, err := c.wait(30 * time.Second)
	if err != nil {
		c.abandon()
		return nil, err
	}
	if !bytes.Contains(res, want) {
		return nil, fmt.Errorf("echo %s answered %.200s", args, res)
	}
	return c, nil
}

// warm makes n echo calls, k at a time.
func warm(p *path, n, k int) error {
	var wg sync.WaitGroup
	errc := make(chan error, k)
	per := max(1, n/k)
	for range k {
		wg.Go(func() {
			for range per {
				if _, err := echo(p); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// gatewayPIDs are the pids whose CPU counts for p.
func gatewayPIDs(p *path) []int {
	var pids []int
	for _, g := range p.gateway {
		pids = append(pids, g.pid())
	}
	return pids
}

// latency1 makes calls one at a time for d.
func (b *bench) latency1(p *path, r *round) {
	if err := warm(p, 20, 1); err != nil {
		r.fail("warm-up: %v", err)
		return
	}
	pids := gatewayPIDs(p)
	cpu0 := cpuOf(pids)
	end := time.Now().Add(b.cfg.lat1)
	for time.Now().Before(end) {
		c, err := echo(p)
		if err != nil {
			r.fail("1 in flight: %v", err)
			return
		}
		r.lat1 = append(r.lat1, c.latency())
	}
	r.cpu1, r.calls1 = cpuOf(pids)-cpu0, len(r.lat1)
}

// latencyN keeps b.cfg.inflight calls in flight for d: each worker makes
// calls back to back; all start together after a barrier.
func (b *bench) latencyN(p *path, r *round) {
	k := b.cfg.inflight
	if err := warm(p, 2*k, k); err != nil {
		r.fail("warm-up: %v", err)
		return
	}
	pids := gatewayPIDs(p)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		lats    []time.Duration
		firstEr error
	)
	barrier := make(chan struct{})
	var end time.Time
	for range k {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 1024)
			<-barrier
			for time.Now().Before(end) {
				c, err := echo(p)
				if err != nil {
					mu.Lock()
					firstEr = err
					mu.Unlock()
					break
				}
				mine = append(mine, c.latency())
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	time.Sleep(10 * time.Millisecond) // every worker at the barrier
	ups := upstreamPIDs(p, pids)
	cpu0, host0, up0 := cpuOf(pids), selfCPU(), cpuOf(ups)
	start := time.Now()
	end = start.Add(b.cfg.latN)
	close(barrier)
	wg.Wait()
	elapsed := time.Since(start)
	r.cpu32, r.calls32 = cpuOf(pids)-cpu0, len(lats)
	r.host32, r.up32 = selfCPU()-host0, cpuOf(ups)-up0
	r.lat32 = lats
	r.tput = float64(len(lats)) / elapsed.Seconds()
	if firstEr != nil {
		r.fail("%d in flight: %v", k, firstEr)
	}
}

// burst calls the demo's burst tool: count progress notifications back to
// back, then the result.
func (b *bench) burst(p *path, r *round) {
	n := b.cfg.burstSize
	for i := -1; i < b.cfg.bursts; i++ { // i == -1: warm-up
		args := []byte(`{"count":` + strconv.Itoa(n) + `,"n":` + strconv.FormatInt(seq.Add(1), 10) + `}`)
		c, err := p.h.start(p.tool("burst"), args, startOpts{progress: true})
		if err != nil {
			r.fail("burst: %v", err)
			return
		}
		if _, err := c.wait(60 * time.Second); err != nil {
			c.abandon()
			r.fail("burst: %v", err)
			return
		}
		if i < 0 {
			continue
		}
		// Late progress may still be on its way: give it a moment.
		time.Sleep(5 * time.Millisecond)
		c.mu.Lock()
		got, late := c.progress, c.late
		c.mu.Unlock()
		ordered := true
		for j := 1; j < len(got); j++ {
			if got[j] <= got[j-1] {
				ordered = false
			}
		}
		r.bursts = append(r.bursts, c.latency())
		r.delivered = append(r.delivered, float64(len(got))/float64(n))
		r.ordered = append(r.ordered, ordered)
		r.late += late
	}
}

// cancel starts a silent long call (wait), waits until the upstream has it,
// cancels it as the host, and times until the upstream records the
// cancellation of that request: the upstream's clock against the bench's,
// both the machine's. The request is known by a tag in its _meta, and
// its cancellation by the upstream's id of it; a cancellation that named
// another request, or none running, did not cancel the call, and counts
// as never.
func (b *bench) cancel(p *path, r *round) {
	// giveUpAfter cancellations never seen, and none seen, end the path's
	// cancellations for the round.
	const giveUpAfter = 5
	for i := -1; i < b.cfg.cancels; i++ { // i == -1: warm-up
		c, req, err := p.startWait("c-", "30")
		if err != nil {
			r.fail("cancel: %v", err)
			return
		}
		t0 := c.cancel()
		e, err := p.tail.await(func(e *demo.Event) bool {
			return e.Event == demo.EventCancelled && bytes.Equal(e.RequestID, req.ID) && e.Known != nil && *e.Known
		}, b.cfg.cancelWait)
		c.abandon()
		if i < 0 {
			continue
		}
		if err != nil {
			r.missed++
			if r.missed >= giveUpAfter && len(r.cancels) == 0 {
				return // the path does not cancel: no need to wait a hundred times to say so
			}
			continue
		}
		r.cancels = append(r.cancels, at(e).Sub(t0.Round(0)))
		// Let the upstream end the call before the next one.
		_, _ = p.tail.await(func(e *demo.Event) bool { return e.Event == demo.EventFinished && bytes.Equal(e.ID, req.ID) }, time.Second)
	}
}
