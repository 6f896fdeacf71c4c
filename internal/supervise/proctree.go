package supervise

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file reads the process table (/proc) for the supervisor (shim.go)
// and the reaper (reap.go): who descends from whom, who is in which
// process group and session, and when each process started, so that a pid
// the kernel has since given to another process is never mistaken for one
// of ours.

// procInfo is what mcpx reads of one process in /proc/<pid>/stat.
type procInfo struct {
	pid, ppid, pgid, sid int
	state                byte   // R, S, D, Z, T, ...
	start                uint64 // start time, in clock ticks after boot
}

// zombie reports whether the process has exited and waits to be reaped.
func (p procInfo) zombie() bool { return p.state == 'Z' || p.state == 'X' }

// readProc reads /proc/<pid>/stat.
func readProc(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	return parseStat(pid, b)
}

// parseStat parses the contents of /proc/<pid>/stat: "pid (comm) state
// ppid pgrp session ... starttime ...". The command name may hold spaces
// and parentheses; it ends at the last ')'.
func parseStat(pid int, b []byte) (procInfo, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	p := procInfo{pid: pid, state: f[0][0]}
	var errs [4]error
	p.ppid, errs[0] = strconv.Atoi(f[1])
	p.pgid, errs[1] = strconv.Atoi(f[2])
	p.sid, errs[2] = strconv.Atoi(f[3])
	p.start, errs[3] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return p, nil
}

// listProcs returns every process it can read; processes that end while it
// reads are left out.
func listProcs() ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]procInfo, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if p, err := readProc(pid); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// procStart returns the start time of process pid (0 if it is gone).
func procStart(pid int) uint64 {
	p, err := readProc(pid)
	if err != nil {
		return 0
	}
	return p.start
}

// alive reports whether pid is the process that started at start, and has
// not exited.
func alive(pid int, start uint64) bool {
	p, err := readProc(pid)
	return err == nil && p.start == start && !p.zombie()
}

// procUID returns the real user id of process pid.
func procUID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no Uid", pid)
}

// procEnvHas reports whether the environment process pid started with (as
// its exec saw it) holds the entry kv ("NAME=value").
func procEnvHas(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for entry := range bytes.SplitSeq(b, []byte{0}) {
		if string(entry) == kv {
			return true
		}
	}
	return false
}

// bootID identifies this boot of the machine: process start times count
// from it.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// treeOf returns the pids of every live (not zombie) process in procs that
// root matches, or that descends (by parent links) from one that does,
// except self.
func treeOf(procs []procInfo, self int, root func(procInfo) bool) []int {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	seen := map[int]bool{}
	var out []int
	var walk func(p procInfo)
	walk = func(p procInfo) {
		if seen[p.pid] {
			return
		}
		seen[p.pid] = true
		if p.pid != self && !p.zombie() {
			out = append(out, p.pid)
		}
		for _, c := range children[p.pid] {
			walk(c)
		}
	}
	for _, p := range procs {
		if root(p) {
			walk(p)
		}
	}
	return out
}

// killAll sends SIGKILL to whatever find returns, again and again (a
// process may fork while it dies; its orphans are found next round), until
// find returns nothing or the time limit has passed. It returns how many
// processes it killed and whether nothing was left.
func killAll(find func() []int, limit time.Duration) (int, bool) {
	deadline := time.Now().Add(limit)
	killed := map[int]bool{}
	for round := 0; ; round++ {
		pids := find()
		if len(pids) == 0 {
			return len(killed), true
		}
		if time.Now().After(deadline) {
			return len(killed), false
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		time.Sleep(min(time.Millisecond<<min(round, 5), 20*time.Millisecond))
	}
}
