package supervise

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options says how a pool runs its stdio upstreams (see shim.go).
type Options struct {
	// Shim is the executable run as `Shim shim ...` to supervise each
	// stdio upstream: the mcpx executable (cmd/mcpx passes /proc/self/exe,
	// which stays the running build even if the file is replaced). ""
	// starts upstreams directly, each in its own process group with a
	// SIGKILL death signal: then what they spawn may outlive a killed mcpx.
	Shim string
	// Records is a directory holding one small file per live upstream
	// process (its group id, start time, the tag its tree
	// inherits, and the mcpx process that owns it), removed when it ends.
	// [Reap] kills what the records of owners no longer running name. ""
	// keeps no records.
	Records string
	// CleanEnv starts the child with the server's Env alone (and the tag
	// Reap knows its tree by), not mcpx's environment with Env over it:
	// for a child that is to have no ambient authority (a script's).
	CleanEnv bool
}

// record is the file of one live upstream process.
type record struct {
	PID        int    `json:"pid"`   // the upstream's process: its group leader
	Start      uint64 `json:"start"` // its start time (clock ticks after boot)
	Boot       string `json:"boot"`  // the boot it started in
	Tag        string `json:"tag"`   // value of tagEnv in its tree
	Owner      int    `json:"owner"` // the mcpx process that started it
	OwnerStart uint64 `json:"ownerStart"`
	Server     string `json:"server"`
	Command    string `json:"command"`
	// Cgroup is the cgroup the upstream started in (cgroup.go), "" if none.
	Cgroup string `json:"cgroup,omitempty"`
}

// selfStart is this process's start time.
var selfStart = sync.OnceValue(func() uint64 { return procStart(os.Getpid()) })

// newTag returns a fresh value for tagEnv.
func newTag() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeRecord stores r in dir and returns the file's path.
func writeRecord(dir string, r *record) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%d.json", r.Owner, r.PID))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// Reap kills every process that the records in dir of owners no longer
// running name (an earlier mcpx that died before it could stop its
// upstreams, or whose supervisors were killed with it), and removes those
// records. Records of live owners (other daemons) are left alone. A
// process is killed only if it belongs to this user and is provably the
// recorded one or of its tree: the recorded process itself only if its
// start time matches (a recycled pid is someone else's), members of its
// group started no earlier than it, anything carrying the
// record's tag in its environment, and every descendant of those. It
// returns how many processes it killed.
func Reap(dir string, log *slog.Logger) int {
	defer sweepCgroups()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	boot, uid, self := bootID(), os.Getuid(), os.Getpid()
	total := 0
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ".tmp") {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
				os.Remove(path)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var r record
		if json.Unmarshal(b, &r) != nil || r.PID <= 1 {
			os.Remove(path) // not ours, or torn: nothing to act on
			continue
		}
		if r.Boot != boot {
			os.Remove(path) // an earlier boot: nothing of it runs
			continue
		}
		if alive(r.Owner, r.OwnerStart) {
			continue // its mcpx runs: the upstream is in use
		}
		n, clean := killAll(func() []int { return recordTree(&r, self, uid) }, 2*time.Second)
		if r.Cgroup != "" {
			// Whatever left the tree, its group and its environment.
			m, gone := killCgroup(r.Cgroup, 0, 2*time.Second)
			n, clean = n+m, clean && gone
		}
		total += n
		if n > 0 || !clean {
			log.Warn("reaped the processes of an upstream an earlier mcpx left behind",
				"server", r.Server, "command", r.Command, "pid", r.PID, "owner", r.Owner, "killed", n, "allGone", clean)
		}
		os.Remove(path)
	}
	return total
}

// recordTree returns the live processes of this user that belong to r's
// upstream (see Reap), except self.
func recordTree(r *record, self, uid int) []int {
	procs, err := listProcs()
	if err != nil {
		return nil
	}
	leaderOK := true // gone: its group, while it lasts, is its
	for _, p := range procs {
		if p.pid == r.PID {
			leaderOK = p.start == r.Start
		}
	}
	tag := ""
	if r.Tag != "" {
		tag = tagEnv + "=" + r.Tag
	}
	pids := treeOf(procs, self, func(p procInfo) bool {
		if p.pid == r.PID {
			return leaderOK
		}
		if leaderOK && p.pgid == r.PID && p.start >= r.Start {
			return true
		}
		return tag != "" && procEnvHas(p.pid, tag)
	})
	out := pids[:0]
	for _, pid := range pids {
		if u, err := procUID(pid); err == nil && u == uid {
			out = append(out, pid)
		}
	}
	return out
}
