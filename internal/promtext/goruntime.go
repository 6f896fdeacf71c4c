package promtext

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The runtime/metrics samples the go_memstats_ families are made of.
var runtimeSamples = [...]string{
	"/gc/heap/tiny/allocs:objects", // 0
	"/gc/heap/allocs:objects",
	"/gc/heap/frees:objects",
	"/gc/heap/allocs:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes", // 5
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/free:bytes",
	"/gc/heap/objects:objects",
	"/memory/classes/heap/stacks:bytes", // 10
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mcache/free:bytes", // 15
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
	"/gc/heap/goal:bytes",
	"/gc/gogc:percent", // 20
	"/gc/gomemlimit:bytes",
	"/sched/gomaxprocs:threads",
}

// goStats is one scrape's reading of the runtime.
type goStats struct {
	samples [len(runtimeSamples)]metrics.Sample
	gc      debug.GCStats
}

func (g *goStats) u(i int) float64 {
	if v := g.samples[i].Value; v.Kind() == metrics.KindUint64 {
		return float64(v.Uint64())
	}
	return 0
}

// goMetric is a family read from a goStats.
type goMetric struct {
	name, help string
	typ        Type
	value      func(g *goStats) float64
}

// RegisterGo registers the Go runtime's metrics: go_goroutines,
// go_threads, go_gc_duration_seconds, go_memstats_*, go_info and the
// GOGC, GOMEMLIMIT and GOMAXPROCS settings, the names and meanings
// Prometheus's Go client gives them.
func RegisterGo(r *Registry) {
	g := &goStats{}
	for i, name := range runtimeSamples {
		g.samples[i].Name = name
	}
	r.OnScrape(func() {
		metrics.Read(g.samples[:])
		g.gc.PauseQuantiles = make([]time.Duration, 5)
		debug.ReadGCStats(&g.gc)
	})
	for _, m := range goMetrics() {
		read := func(emit Emit) { emit(m.value(g)) }
		if m.typ == CounterType {
			r.CounterFunc(m.name, m.help, nil, read)
		} else {
			r.GaugeFunc(m.name, m.help, nil, read)
		}
	}
	r.GaugeFunc("go_info", "Information about the Go environment.", []string{"version"}, func(emit Emit) {
		emit(1, runtime.Version())
	})
	r.register(&summary{
		desc: newDesc("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", SummaryType, nil),
		read: func() ([][2]float64, float64, uint64) {
			q := g.gc.PauseQuantiles
			return [][2]float64{{0, q[0].Seconds()}, {0.25, q[1].Seconds()}, {0.5, q[2].Seconds()}, {0.75, q[3].Seconds()}, {1, q[4].Seconds()}},
				g.gc.PauseTotal.Seconds(), uint64(g.gc.NumGC)
		},
	})
}

// goMetrics are the families of one number each; go_memstats_ are read
// as Prometheus's Go client reads them from runtime/metrics.
func goMetrics() []goMetric {
	sum := func(is ...int) func(g *goStats) float64 {
		return func(g *goStats) float64 {
			t := 0.0
			for _, i := range is {
				t += g.u(i)
			}
			return t
		}
	}
	return []goMetric{
		{"go_goroutines", `Number of goroutines that currently exist.`, GaugeType, func(*goStats) float64 { return float64(runtime.NumGoroutine()) }},
		{"go_threads", `Number of OS threads created.`, GaugeType, func(*goStats) float64 {
			n, _ := runtime.ThreadCreateProfile(nil)
			return float64(n)
		}},
		{"go_gc_gogc_percent", `Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.`, GaugeType, sum(20)},
		{"go_gc_gomemlimit_bytes", `Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.`, GaugeType, sum(21)},
		{"go_sched_gomaxprocs_threads", `The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.`, GaugeType, sum(22)},
		{"go_memstats_alloc_bytes", `Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.`, GaugeType, sum(5)},
		{"go_memstats_alloc_bytes_total", `Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.`, CounterType, sum(3)},
		{"go_memstats_buck_hash_sys_bytes", `Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.`, GaugeType, sum(16)},
		{"go_memstats_frees_total", `Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.`, CounterType, sum(2, 0)},
		{"go_memstats_gc_sys_bytes", `Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.`, GaugeType, sum(17)},
		{"go_memstats_heap_alloc_bytes", `Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.`, GaugeType, sum(5)},
		{"go_memstats_heap_idle_bytes", `Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.`, GaugeType, sum(7, 8)},
		{"go_memstats_heap_inuse_bytes", `Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes`, GaugeType, sum(5, 6)},
		{"go_memstats_heap_objects", `Number of currently allocated objects. Equals to /gc/heap/objects:objects.`, GaugeType, sum(9)},
		{"go_memstats_heap_released_bytes", `Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.`, GaugeType, sum(7)},
		{"go_memstats_heap_sys_bytes", `Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.`, GaugeType, sum(5, 6, 7, 8)},
		{"go_memstats_last_gc_time_seconds", `Number of seconds since 1970 of last garbage collection.`, GaugeType, func(g *goStats) float64 { return float64(g.gc.LastGC.UnixNano()) / 1e9 }},
		{"go_memstats_mallocs_total", `Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.`, CounterType, sum(1, 0)},
		{"go_memstats_mcache_inuse_bytes", `Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.`, GaugeType, sum(14)},
		{"go_memstats_mcache_sys_bytes", `Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.`, GaugeType, sum(14, 15)},
		{"go_memstats_mspan_inuse_bytes", `Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.`, GaugeType, sum(12)},
		{"go_memstats_mspan_sys_bytes", `Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.`, GaugeType, sum(12, 13)},
		{"go_memstats_next_gc_bytes", `Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.`, GaugeType, sum(19)},
		{"go_memstats_other_sys_bytes", `Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.`, GaugeType, sum(18)},
		{"go_memstats_stack_inuse_bytes", `Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.`, GaugeType, sum(10)},
		{"go_memstats_stack_sys_bytes", `Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.`, GaugeType, sum(10, 11)},
		{"go_memstats_sys_bytes", `Number of bytes obtained from system. Equals to /memory/classes/total:byte.`, GaugeType, sum(4)},
	}
}
