package sock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockExclusive(t *testing.T) {
	path := filepath.Join(shortDir(t), "state", "d.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	_, err = Lock(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock = %v, want ErrLocked", err)
	}
	if want := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder (%s)", err, want)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Errorf("second unlock = %v, want nil", err)
	}
	unlock, err = Lock(path)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock()
}

// lockHelper runs in a child process: it takes the lock at path, says so
// on stdout and waits to be killed, or gives up after a deadline.
func lockHelper(path string) int {
	if _, err := Lock(path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	return 2
}

func TestLockReleasedWhenHolderDies(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.lock")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if s != "locked\n" {
			t.Fatalf("helper said %q, want \"locked\"", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helper did not take the lock before the deadline")
	}

	if _, err := Lock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock while the helper holds it = %v, want ErrLocked", err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	killed = true
	cmd.Wait() // reaped: the kernel has closed its files
	unlock, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
	unlock()
}
