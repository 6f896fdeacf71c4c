package sandbox

import (
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"golang.org/x/sys/unix"
)

// watchEvery is how often the child looks at its memory and CPU time.
const watchEvery = 5 * time.Millisecond

// haltGrace is how long a script halted by the watcher has to stop before
// the child reports the limit itself and exits. The interrupt stops
// JavaScript within a millisecond, but not the engine's own code that a
// script calls (a regular expression backtracking catastrophically runs
// in the matcher, which never looks at it): without this the child would
// run on to the RLIMIT_CPU backstop's SIGKILL.
const haltGrace = 100 * time.Millisecond

// limitMemory sets the child's Go memory limit half again above its
// limit (so the heap the watcher measures after each collection never
// runs far past it, and the collector does not thrash below it) and, as
// a backstop for what the watcher misses between two looks, an
// RLIMIT_DATA of twice the limit plus room for the runtime: the Go
// runtime dies with "out of memory" beyond it, which the parent reports
// as the memory limit. Not under the race detector, whose shadow memory
// counts against RLIMIT_DATA.
func limitMemory(mem int64) {
	debug.SetMemoryLimit(mem + mem/2)
	if raceEnabled {
		return
	}
	lim := uint64(2*mem + 256<<20)
	_ = unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: lim, Max: lim})
}

// watch starts the watcher of the script's memory and CPU time, which
// halts the script past either limit; the returned func stops it. The
// CPU limit has an RLIMIT_CPU backstop: SIGXCPU a second past it, which
// the watcher also takes as the limit, and SIGKILL a second later.
func (c *child) watch() (stop func()) {
	cpu0 := cpuTime()
	soft := uint64((cpu0 + c.lim.CPU + 2*time.Second - 1) / time.Second)
	_ = unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: soft, Max: soft + 1})
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, unix.SIGXCPU)
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		halt := func(f *failure) {
			c.halt(f)
			t := time.NewTimer(haltGrace)
			defer t.Stop()
			select {
			case <-done: // the script stopped
			case <-t.C:
				c.finish(nil, f)
				os.Exit(0)
			}
		}
		cpuLimit := func() { halt(limitFailure(LimitCPU, c.lim.CPU.String())) }
		for {
			select {
			case <-done:
				return
			case <-xcpu:
				cpuLimit()
				return
			case <-t.C:
			}
			metrics.Read(samples)
			live := int64(samples[0].Value.Uint64())
			inUse := int64(samples[1].Value.Uint64() - samples[2].Value.Uint64())
			if live > c.mem || inUse > 2*c.mem {
				halt(memoryFailure(c.mem))
				return
			}
			if cpuTime()-cpu0 > c.lim.CPU {
				cpuLimit()
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		signal.Stop(xcpu)
	}
}

func memoryFailure(mem int64) *failure { return limitFailure(LimitMemory, mib(mem)) }

func limitFailure(limit, detail string) *failure {
	return &failure{Kind: failLimit, Limit: limit, Detail: detail, Message: (&LimitError{Limit: limit, Detail: detail}).Error()}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
