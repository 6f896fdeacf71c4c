package supervise

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestRecords: a supervised upstream is recorded while it lives, and its
// record goes when it ends.
func TestRecords(t *testing.T) {
	sup := testShim(t)
	sup.Records = t.TempDir()
	p := startSh(t, sup, "exec cat")
	files, _ := filepath.Glob(filepath.Join(sup.Records, "*.json"))
	if len(files) != 1 {
		t.Fatalf("records: %v, want one", files)
	}
	want := fmt.Sprintf("%d-%d.json", os.Getpid(), p.PID())
	if filepath.Base(files[0]) != want {
		t.Errorf("record %s, want %s", files[0], want)
	}
	p.Stop(time.Second)
	if files, _ := filepath.Glob(filepath.Join(sup.Records, "*")); len(files) != 0 {
		t.Errorf("records after the upstream ended: %v", files)
	}
}

// deadPID returns the pid and start time of a process that has ended.
func deadPID(t *testing.T) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read x; exit 0")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := procStart(cmd.Process.Pid)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, start
}

// leftTree starts, directly and detached, the kind of tree an upstream of
// a dead mcpx leaves behind when its shim was killed too: a process group
// of its own with a leader, a member, and a process that left the group
// (and session) but carries the tag. It returns the leader and the tag.
func leftTree(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	tag := newTag()
	cmd := exec.Command("sh", "-c", "sleep 1000 & setsid sleep 1001 & wait")
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range tagged(t, tag) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		_ = cmd.Wait()
	})
	waitTagged(t, tag, 3)
	return cmd, tag
}

// TestReap: a record whose owner is gone has its whole tree killed (by
// group, by tag, by descent) and is removed; a record of a live owner is
// left alone; a record naming a recycled pid kills nothing but what
// carries its tag.
func TestReap(t *testing.T) {
	dir := t.TempDir()
	owner, ownerStart := deadPID(t)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))

	// A live owner (this process): nothing is touched.
	live, liveTag := leftTree(t)
	liveRec := &record{PID: live.Process.Pid, Start: procStart(live.Process.Pid), Boot: bootID(), Tag: liveTag,
		Owner: os.Getpid(), OwnerStart: selfStart(), Server: "live"}
	livePath, err := writeRecord(dir, liveRec)
	if err != nil {
		t.Fatal(err)
	}

	// A recycled pid: the record names a live process of ours whose start
	// time differs, and a tag nothing carries.
	other := exec.Command("sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	recycled := &record{PID: other.Process.Pid, Start: procStart(other.Process.Pid) - 1, Boot: bootID(), Tag: newTag(),
		Owner: owner, OwnerStart: ownerStart, Server: "recycled"}
	if _, err := writeRecord(dir, recycled); err != nil {
		t.Fatal(err)
	}

	// What a dead mcpx left.
	dead, deadTag := leftTree(t)
	deadRec := &record{PID: dead.Process.Pid, Start: procStart(dead.Process.Pid), Boot: bootID(), Tag: deadTag,
		Owner: owner, OwnerStart: ownerStart, Server: "dead"}
	if _, err := writeRecord(dir, deadRec); err != nil {
		t.Fatal(err)
	}

	// A record of an earlier boot, and garbage.
	if _, err := writeRecord(dir, &record{PID: 12345, Boot: "earlier", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "torn.json"), []byte(`{"pid":`), 0o600); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	n := Reap(dir, log)
	t.Logf("reaped %d processes in %s", n, time.Since(start).Round(time.Millisecond))
	if n != 3 {
		t.Errorf("killed %d processes, want 3 (leader, group member, tagged escapee)", n)
	}
	noneLeft(t, deadTag, 2*time.Second)
	if got := tagged(t, liveTag); len(got) != 3 {
		t.Errorf("the live owner's tree: %d processes, want all 3", len(got))
	}
	if p, err := readProc(other.Process.Pid); err != nil || p.zombie() {
		t.Errorf("the process of a recycled pid was killed")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if !slices.Equal(files, []string{livePath}) {
		t.Errorf("records left: %v, want the live owner's only", files)
	}
}
