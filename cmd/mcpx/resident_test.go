package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shimFileBudget is the most of the executable a shim may keep resident
// (RssFile) once its upstream runs: without supervise.DropStartupPages it
// keeps what every package's init touched, 17 to 18 MB. With it, 5 to
// 9.5 MB: the same bytes copied to another file measured 5.1 and 9.2 MB,
// as the kernel maps a fault's whole page-cache folio, whose size depends
// on how the file's pages came into the cache.
const shimFileBudget = 12 << 20

// TestShimDropsStartupPages starts a shim as mcpx does (a control pipe on
// fd 3, a report pipe on fd 4) over sleep, and reads what it holds.
func TestShimDropsStartupPages(t *testing.T) {
	bin := binary(t)
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep to supervise")
	}
	cmd := exec.Command(bin, "shim", strconv.Itoa(os.Getpid()), sleep, "sleep", "60")
	cmd.ExtraFiles = []*os.File{ctrlR, repW}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctrlR.Close()
	repW.Close()
	defer func() {
		ctrlW.Close() // mcpx gone: the shim ends its upstream and exits
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	line, err := bufio.NewReader(repR).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ok" {
		t.Fatalf("the shim reported %q, %v; want ok", line, err)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var fileKB int
	for l := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "RssFile:"); ok {
			fileKB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	if fileKB == 0 {
		t.Fatalf("no RssFile in the shim's status:\n%s", status)
	}
	if fileKB<<10 > shimFileBudget {
		t.Errorf("the shim keeps %.1f MB of the executable resident; budget %.1f MB", float64(fileKB)/1024, float64(shimFileBudget)/(1<<20))
	}
	t.Logf("the shim's RssFile: %d kB", fileKB)
}
