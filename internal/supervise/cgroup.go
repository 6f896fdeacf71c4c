package supervise

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Where Linux lets mcpx make cgroups (cgroup v2, a cgroup of its own it
// may write), each upstream starts in a cgroup of its own, mcpx-<tag>:
// everything it spawns is born in it and cannot leave it (a process needs
// write access to another cgroup to move), whatever it does with its
// session, group, parent or environment. Killing the cgroup kills the
// whole tree: the shim does it when the upstream exits or mcpx goes, mcpx
// when it has reaped the shim, and [Reap] for the records of a dead mcpx
// whose supervisors died with it. Where it cannot (cgroup v1 only, or no
// write access, as in most desktop sessions), the process tree, session,
// group and tag are the means, and a descendant that leaves all of them
// and clears its environment may outlive a daemon killed together with
// its supervisors.

// cgroupPrefix starts the name of every cgroup mcpx makes: the only
// cgroups it ever kills.
const cgroupPrefix = "mcpx-"

// cgroupMount returns where cgroup v2 is mounted, "" if nowhere.
func cgroupMount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source ...
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if fields := strings.Fields(pre); len(fields) >= 5 {
			return fields[4]
		}
	}
	return ""
}

// ownCgroup returns the directory of this process's cgroup v2, "" if it
// has none.
func ownCgroup() string {
	mnt := cgroupMount()
	if mnt == "" {
		return ""
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return filepath.Join(mnt, path)
		}
	}
	return ""
}

// cgroupParent is the cgroup under which this mcpx makes its upstreams'
// cgroups, "" where it cannot make one.
var cgroupParent = sync.OnceValue(func() string {
	dir := ownCgroup()
	if dir == "" {
		return ""
	}
	probe := filepath.Join(dir, cgroupPrefix+"probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return ""
	}
	os.Remove(probe)
	return dir
})

// newCgroup makes the cgroup of the upstream tagged tag and opens it for
// a child to start in; "" and -1 where cgroups cannot be made.
func newCgroup(tag string) (string, int) {
	parent := cgroupParent()
	if parent == "" {
		return "", -1
	}
	dir := filepath.Join(parent, cgroupPrefix+tag)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", -1
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return "", -1
	}
	return dir, fd
}

// isOurCgroup reports whether dir is a cgroup mcpx made for an upstream.
func isOurCgroup(dir string) bool {
	return dir != "" && strings.HasPrefix(filepath.Base(dir), cgroupPrefix)
}

// cgroupMembers returns the pids in cgroup dir.
func cgroupMembers(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range bytes.FieldsSeq(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killCgroup kills every process in cgroup dir but except, waits up to
// wait for it to empty, and removes it (unless except is in it). It
// returns how many it signalled and whether the cgroup is gone (or
// holds only except). Only a cgroup mcpx made is touched.
func killCgroup(dir string, except int, wait time.Duration) (int, bool) {
	if !isOurCgroup(dir) {
		return 0, true
	}
	deadline := time.Now().Add(wait)
	killed := map[int]bool{}
	for {
		left := 0
		for _, pid := range cgroupMembers(dir) {
			if pid == except {
				continue
			}
			left++
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		if left == 0 {
			if except == 0 {
				err := os.Remove(dir)
				return len(killed), err == nil || os.IsNotExist(err)
			}
			return len(killed), true
		}
		if time.Now().After(deadline) {
			return len(killed), false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// selfCgroupIfOurs returns this process's cgroup if mcpx made it (the
// shim's, its upstream's), else "".
func selfCgroupIfOurs() string {
	if dir := ownCgroup(); isOurCgroup(dir) {
		return dir
	}
	return ""
}

// sweepCgroups removes the empty cgroups of mcpx's under this process's
// parent cgroup that are older than a minute: an mcpx killed with its
// supervisors leaves its upstreams' cgroups behind. One with a process in
// it cannot be removed; a younger one may be a start under way.
func sweepCgroups() {
	parent := cgroupParent()
	if parent == "" {
		return
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(parent, e.Name())) // fails unless empty
		}
	}
}

// leaveCgroup moves pid (the shim, the last in it) to cgroup dir's parent
// and removes dir.
func leaveCgroup(dir string, pid int) {
	procs := filepath.Join(filepath.Dir(dir), "cgroup.procs")
	if os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0) == nil {
		_ = os.Remove(dir)
	}
}
