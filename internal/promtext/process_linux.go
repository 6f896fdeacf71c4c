package promtext

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the times in /proc/self/stat: clock ticks of
// 1/100 s on every Linux Go runs on.
const userHZ = 100

// procStats is one scrape's reading of /proc/self.
type procStats struct {
	statOK    bool
	cpu       float64 // seconds, user and system
	start     float64 // Unix seconds
	vsize     float64
	rss       float64
	fds       int
	fdsOK     bool
	nofile    syscall.Rlimit
	nofileOK  bool
	as        syscall.Rlimit
	asOK      bool
	in, out   float64
	netstatOK bool
	bootTime  float64 // read once
}

// RegisterProcess registers the process's metrics: CPU time, memory,
// descriptors, limits, start time and the network bytes of its
// namespace, under the names Prometheus's Go client gives them. A value
// /proc does not give is left out of the page.
func RegisterProcess(r *Registry) {
	p := &procStats{}
	r.OnScrape(p.read)
	reg := func(name, help string, typ Type, ok *bool, v func() float64) {
		read := func(emit Emit) {
			if *ok {
				emit(v())
			}
		}
		if typ == CounterType {
			r.CounterFunc(name, help, nil, read)
		} else {
			r.GaugeFunc(name, help, nil, read)
		}
	}
	reg("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", CounterType, &p.statOK, func() float64 { return p.cpu })
	reg("process_open_fds", "Number of open file descriptors.", GaugeType, &p.fdsOK, func() float64 { return float64(p.fds) })
	reg("process_max_fds", "Maximum number of open file descriptors.", GaugeType, &p.nofileOK, func() float64 { return float64(p.nofile.Cur) })
	reg("process_virtual_memory_bytes", "Virtual memory size in bytes.", GaugeType, &p.statOK, func() float64 { return p.vsize })
	reg("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", GaugeType, &p.asOK, func() float64 { return float64(p.as.Cur) })
	reg("process_resident_memory_bytes", "Resident memory size in bytes.", GaugeType, &p.statOK, func() float64 { return p.rss })
	reg("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", GaugeType, &p.statOK, func() float64 { return p.start })
	reg("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", CounterType, &p.netstatOK, func() float64 { return p.in })
	reg("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", CounterType, &p.netstatOK, func() float64 { return p.out })
}

func (p *procStats) read() {
	p.statOK = p.readStat()
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		p.fds, p.fdsOK = len(ents), true
	} else {
		p.fdsOK = false
	}
	p.nofileOK = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &p.nofile) == nil
	p.asOK = syscall.Getrlimit(syscall.RLIMIT_AS, &p.as) == nil
	p.in, p.out, p.netstatOK = readNetstat()
}

// readStat reads /proc/self/stat: fields 14 and 15 (user and system
// time), 22 (start, in ticks after boot), 23 (virtual size) and 24
// (resident pages).
func (p *procStats) readStat() bool {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 22 {
		return false
	}
	num := func(field int) float64 {
		v, _ := strconv.ParseUint(f[field-3], 10, 64)
		return float64(v)
	}
	if p.bootTime == 0 {
		p.bootTime = bootTime()
	}
	p.cpu = (num(14) + num(15)) / userHZ
	p.start = p.bootTime + num(22)/userHZ
	p.vsize = num(23)
	p.rss = num(24) * float64(os.Getpagesize())
	return true
}

// bootTime is the btime line of /proc/stat: the Unix second the machine
// booted.
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return float64(n)
		}
	}
	return 0
}

// readNetstat reads InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat: a line of names, then a line of values.
func readNetstat() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		for i, v := range strings.Fields(rest) {
			if i >= len(names) {
				break
			}
			n, _ := strconv.ParseFloat(v, 64)
			switch names[i] {
			case "InOctets":
				in, ok = n, true
			case "OutOctets":
				out = n
			}
		}
		return in, out, ok
	}
	return 0, 0, false
}
