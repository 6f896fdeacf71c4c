package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// perFamily is how many processes one family upstream makes: the shim, the
// fixture, and five sleeps (one of them an escapee: a new session, no
// parent of the tree, an empty environment).
const perFamily = 7

// ps is one process, as /proc shows it.
type ps struct {
	pid, ppid, pgid, sid int
	state                byte
	start                uint64
	tagged               bool // carries the test's tag
}

func (p ps) live() bool { return p.state != 'Z' && p.state != 'X' }

// psAll reads every process; tagged marks those whose environment holds
// orphanTagEnv=tag, and the family's escapee (by its arguments).
func psAll(t testing.TB, tag string) []ps {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []ps
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+2:]))
		if len(f) < 20 {
			continue
		}
		p := ps{pid: pid, state: f[0][0]}
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgid, _ = strconv.Atoi(f[2])
		p.sid, _ = strconv.Atoi(f[3])
		p.start, _ = strconv.ParseUint(f[19], 10, 64)
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil {
			p.tagged = bytes.Contains(env, []byte("\x00"+harness.OrphanTagEnv+"="+tag+"\x00")) ||
				bytes.HasPrefix(env, []byte(harness.OrphanTagEnv+"="+tag+"\x00"))
		}
		if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && !p.tagged {
			p.tagged = bytes.HasSuffix(cmd, []byte("\x00"+harness.EscapeeMark(tag)+"\x00"))
		}
		out = append(out, p)
	}
	return out
}

// tree is a snapshot of the processes below a root, with their groups and
// sessions.
type tree struct {
	procs      map[int]ps // pid -> process, the root included
	pgids, sid map[int]bool
}

// treeBelow snapshots root and everything that descends from it.
func treeBelow(t testing.TB, root int, all []ps) tree {
	t.Helper()
	kids := map[int][]ps{}
	var rootPS ps
	for _, p := range all {
		kids[p.ppid] = append(kids[p.ppid], p)
		if p.pid == root {
			rootPS = p
		}
	}
	tr := tree{procs: map[int]ps{}, pgids: map[int]bool{}, sid: map[int]bool{}}
	var walk func(p ps)
	walk = func(p ps) {
		tr.procs[p.pid] = p
		// A group or session the root only joined (a process the test
		// started), which its children may share (the code-mode sandbox's),
		// is not the tree's.
		if p.pgid != rootPS.pgid || p.pgid == root {
			tr.pgids[p.pgid] = true
		}
		if p.sid != rootPS.sid || p.sid == root {
			tr.sid[p.sid] = true
		}
		for _, c := range kids[p.pid] {
			walk(c)
		}
	}
	walk(rootPS)
	return tr
}

// familyCount counts the tree's processes of the family upstreams (the
// daemon and its code-mode sandbox children are not).
func familyCount(tr tree) int {
	n := 0
	for _, p := range tr.procs {
		if p.tagged {
			n++
		}
	}
	return n
}

// leftovers returns the live processes that belong to tr or carry the
// tag: the same process (pid and start time), a member of one of its
// groups or sessions, a child of one of its processes, or tagged. except
// is left out (the test's own processes, e.g. `mcpx serve`).
func leftovers(t testing.TB, tr tree, tag string, except map[int]bool) []ps {
	t.Helper()
	var out []ps
	for _, p := range psAll(t, tag) {
		if !p.live() || except[p.pid] {
			continue
		}
		q, same := tr.procs[p.pid]
		_, parent := tr.procs[p.ppid]
		if same && q.start == p.start || tr.pgids[p.pgid] || tr.sid[p.sid] || parent || p.tagged {
			out = append(out, p)
		}
	}
	return out
}

// zombies counts the tree's processes that have exited but were not
// reaped (by whichever process they were re-parented to).
func zombies(t testing.TB, tr tree, tag string) int {
	n := 0
	for _, p := range psAll(t, tag) {
		if q, ok := tr.procs[p.pid]; ok && q.start == p.start && !p.live() {
			n++
		}
	}
	return n
}

// waitNoLeftovers polls until nothing of tr is left and returns how long
// that took; it fails the test if something is left after limit.
func waitNoLeftovers(t testing.TB, tr tree, tag string, except map[int]bool, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	for {
		left := leftovers(t, tr, tag, except)
		if len(left) == 0 {
			return time.Since(since)
		}
		if time.Since(since) > limit {
			var b strings.Builder
			for _, p := range left {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
				fmt.Fprintf(&b, "\n  %+v %s", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
			}
			t.Fatalf("%d processes left %s after: %s", len(left), limit, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countTagged counts the live processes carrying tag.
func countTagged(t testing.TB, tag string) int {
	n := 0
	for _, p := range psAll(t, tag) {
		if p.live() && p.tagged {
			n++
		}
	}
	return n
}

// waitTaggedCount waits until n live processes carry tag.
func waitTaggedCount(t testing.TB, tag string, n int) {
	t.Helper()
	deadline := time.Now().Add(harness.WaitLong)
	for {
		got := countTagged(t, tag)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes carry the tag, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// familyConfig writes a config of n family upstreams, fam0 ... whose
// processes carry tag.
func familyConfig(t *testing.T, e *mcpxtest.Env, n int, tag string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("fam%d", i)] = map[string]any{
			"command": "sh",
			"args":    []string{"-c", `sleep 1003 & exec "$0" -test.run=^$`, exe},
			"env":     map[string]string{harness.FixtureEnv: "family", "GORACE": mcpxtest.RaceQuickExit, harness.OrphanTagEnv: tag},
		}
	}
	return harness.WriteServers(t, e, nil, servers)
}

func newOrphanTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startFamilies starts n family upstreams with a call in flight on each
// (answered after 60 s), and waits until all of their processes run and
// every call has reached its upstream (its first progress came back).
func startFamilies(t *testing.T, h *mcpxtest.Host, n int, tag string) []jsonrpc.ID {
	t.Helper()
	ids := make([]jsonrpc.ID, n)
	for i := range n {
		ids[i] = h.Request("tools/call", map[string]any{"name": fmt.Sprintf("fam%d__work", i),
			"arguments": map[string]any{"seconds": 60}, "_meta": map[string]any{"progressToken": i}})
	}
	waitTaggedCount(t, tag, n*perFamily)
	h.WaitFor(harness.WaitLong, "a progress from every upstream", func(mcpxtest.Received) bool {
		got := 0
		for _, r := range h.Received() {
			if r.Msg.Method == "notifications/progress" {
				got++
			}
		}
		return got >= n
	})
	return ids
}

// upstreamRecords returns the records of live upstreams in e's state dir.
func upstreamRecords(t *testing.T, e *mcpxtest.Env) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "upstreams", "*.json"))
	var out []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestNoOrphansAfterDaemonKill is the acceptance test of "no orphans": the
// daemon is killed with SIGKILL while it runs 10 upstreams, 60 processes,
// each with a call in flight. Within 2 s nothing is left, by pid, process
// group, session, parent or tag. The host's calls end with an error at
// once; the next `mcpx serve` works, with a new daemon that found and
// cleared the dead one's records; and that daemon, stopped normally,
// leaves nothing either.
func TestNoOrphansAfterDaemonKill(t *testing.T) {
	const n = 10
	e := mcpxtest.NewEnv(t)
	tag := newOrphanTag()
	cfg := familyConfig(t, e, n, tag)
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	ids := startFamilies(t, h, n, tag)

	daemon := harness.DaemonPID(t, e)
	tr := treeBelow(t, daemon, psAll(t, tag))
	if got := familyCount(tr); got != n*perFamily {
		t.Fatalf("the daemon's tree has %d family processes, want %d", got, n*perFamily)
	}
	if recs := upstreamRecords(t, e); len(recs) != n {
		t.Errorf("%d upstream records, want %d", len(recs), n)
	}
	killed := time.Now()
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took := waitNoLeftovers(t, tr, tag, nil, killed, 2*time.Second)
	t.Logf("kill -9 of the daemon with %d upstreams (%d processes) and %d calls in flight: none left after %s",
		n, len(tr.procs), n, took.Round(time.Millisecond))
	for _, id := range ids {
		m := h.Response(id, harness.WaitLong)
		if m.Error == nil {
			t.Errorf("call %s: %s, want an error (its daemon died)", id, m.Encode())
		}
	}
	t.Logf("every host call ended with an error; %s after the kill", time.Since(killed).Round(time.Millisecond))
	time.Sleep(2*time.Second - time.Since(killed)) // time: nothing may come back for 2 s
	if left := leftovers(t, tr, tag, nil); len(left) > 0 {
		t.Fatalf("processes back 2 s after the kill: %+v", left)
	}
	t.Logf("zombies of the tree (exited, waiting for init to reap them): %d", zombies(t, tr, tag))

	// The next serve works: a new daemon, which cleared the records. Its
	// host speaks 2026-07-28: a legacy initialize would start every
	// upstream (to learn their capabilities), and only fam3 is wanted.
	h2 := e.StartHost(mcpxtest.Daemon, cfg)
	res := h2.Result(h2.Request("tools/call", map[string]any{"name": "fam3__work", "arguments": map[string]any{"seconds": 0},
		"_meta": mcpxtest.ModernMeta(nil)}), harness.WaitLong)
	if harness.ResultText(t, res) != "done" {
		t.Errorf("call after the restart: %s", res)
	}
	newDaemon := harness.DaemonPID(t, e)
	for _, r := range upstreamRecords(t, e) {
		if int(r["owner"].(float64)) != newDaemon {
			t.Errorf("a record of another daemon is left: %v", r)
		}
	}

	// Stopped normally, the new daemon leaves nothing. Its family may
	// answer before its escapee has become a sleep that carries the mark.
	waitTaggedCount(t, tag, perFamily)
	tr2 := treeBelow(t, newDaemon, psAll(t, tag))
	if got := familyCount(tr2); got != perFamily {
		t.Errorf("the new daemon's tree has %d family processes, want %d", got, perFamily)
	}
	stopped := time.Now()
	if out, errOut, code := e.Run(harness.WaitLong, "stop", "--config", cfg); code != 0 {
		t.Fatalf("mcpx stop: %d %s%s", code, out, errOut)
	}
	took = waitNoLeftovers(t, tr2, tag, nil, stopped, 2*time.Second)
	t.Logf("mcpx stop: none left after %s", took.Round(time.Millisecond))
	if recs := upstreamRecords(t, e); len(recs) != 0 {
		t.Errorf("records after a normal stop: %v", recs)
	}
}

// TestNoOrphansAfterInProcessKill: the same for `mcpx serve --in-process`,
// which owns its upstreams itself.
func TestNoOrphansAfterInProcessKill(t *testing.T) {
	const n = 3
	e := mcpxtest.NewEnv(t)
	tag := newOrphanTag()
	cfg := familyConfig(t, e, n, tag)
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	cmd, h, end := serveInProcessLine(t, ctx, e, cfg)
	defer end()
	for i := range n {
		h.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fam%d__work","arguments":{"seconds":60}}}`, 10+i, i))
	}
	waitTaggedCount(t, tag, n*perFamily)
	tr := treeBelow(t, cmd.Process.Pid, psAll(t, tag))
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The test reaps mcpx itself; it is no leftover.
	took := waitNoLeftovers(t, tr, tag, map[int]bool{cmd.Process.Pid: true}, killed, 2*time.Second)
	t.Logf("kill -9 of serve --in-process with %d upstreams (%d processes): none left after %s", n, len(tr.procs)-1, took.Round(time.Millisecond))
}

// TestRestartedDaemonReaps: when the supervisors die with the daemon (here
// stopped, then killed with it), what the upstreams spawned survives them;
// the next daemon kills it as it starts, by the records the dead one left.
func TestRestartedDaemonReaps(t *testing.T) {
	const n = 3
	e := mcpxtest.NewEnv(t)
	tag := newOrphanTag()
	cfg := familyConfig(t, e, n, tag)
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	for i := range n {
		h.Result(h.Request("tools/call", map[string]any{"name": fmt.Sprintf("fam%d__work", i), "arguments": map[string]any{"seconds": 0}}), harness.WaitLong)
	}
	waitTaggedCount(t, tag, n*perFamily)
	daemon := harness.DaemonPID(t, e)
	tr := treeBelow(t, daemon, psAll(t, tag))
	var shims []int
	for _, p := range tr.procs {
		if p.ppid == daemon && p.tagged { // not the code-mode sandbox's children
			shims = append(shims, p.pid)
		}
	}
	if len(shims) != n {
		t.Fatalf("the daemon has %d children, want %d supervisors", len(shims), n)
	}
	// Frozen, the daemon cannot act on its supervisors' death, nor they
	// on its: the supervisors die first, then the daemon. (Killing the
	// daemon first would orphan each supervisor's group, in the daemon's
	// session, with a stopped member: the kernel would then wake the group
	// with SIGHUP and SIGCONT, and the supervisors would do their work.)
	_ = syscall.Kill(daemon, syscall.SIGSTOP)
	for _, pid := range shims {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	for _, pid := range shims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// Zombies until their frozen parent dies.
	harness.WaitUntil(t, harness.WaitLong, "end of the killed supervisors", func() bool {
		return !slices.ContainsFunc(shims, harness.ProcAlive)
	})
	_ = syscall.Kill(daemon, syscall.SIGKILL)
	harness.WaitUntil(t, harness.WaitLong, "end of the killed daemon", func() bool { return !harness.ProcAlive(daemon) })
	left := leftovers(t, tr, tag, nil)
	if len(left) == 0 {
		t.Fatal("nothing survived the supervisors: the test shows nothing")
	}
	t.Logf("with their supervisors killed too, %d processes survived the daemon", len(left))

	start := time.Now()
	h2 := e.StartHost(mcpxtest.Daemon, cfg) // a new daemon starts, and reaps
	// A ping, not initialize: initialize would start the upstreams anew
	// (to learn their capabilities), and their processes carry the tag.
	h2.Result(h2.Request("ping", nil), harness.WaitLong)
	took := waitNoLeftovers(t, tr, tag, nil, start, 5*time.Second)
	t.Logf("the next daemon reaped them: none left %s after `mcpx serve` started", took.Round(time.Millisecond))
	paths, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(paths.StateDir, "daemon-*.log"))
	var reaped int
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		reaped += strings.Count(string(b), "reaped the processes of an upstream")
	}
	if reaped != n {
		t.Errorf("the daemon log says it reaped %d upstreams, want %d", reaped, n)
	}
}
