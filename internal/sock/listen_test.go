package sock

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func listen(t *testing.T, path string) net.Listener {
	t.Helper()
	ln, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestListenModeAndRemoveOnClose(t *testing.T) {
	// With no umask the kernel would create the socket 0777; Listen must
	// still end with 0600. (Umask is per process: this test is not parallel.)
	defer syscall.Umask(syscall.Umask(0))
	dir := filepath.Join(shortDir(t), "run") // missing: Listen creates it
	path := filepath.Join(dir, "d.sock")
	ln := listen(t, path)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode(); got != fs.ModeSocket|0o600 {
		t.Errorf("socket mode = %v, want %v", got, fs.ModeSocket|0o600)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v (%v), want 0700", di.Mode().Perm(), err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close, Lstat = %v, want not exist", err)
	}
}

func TestListenStaleSocketRemoved(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false) // a daemon that died leaves its socket behind
	ln.Close()
	listen(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatalf("Dial after replacing stale socket: %v", err)
	}
	c.Close()
}

func TestListenLiveSocketInUse(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	listen(t, path)
	_, err := Listen(path)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Listen = %v, want ErrInUse", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("live socket gone after refused Listen: %v", err)
	}
}

func TestListenKeepsNonSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(path)
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen on regular file = %v, want a not-a-socket error", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "keep me" {
		t.Errorf("file after Listen = %q, %v; want it kept", b, err)
	}
}

func TestListenPathLength(t *testing.T) {
	dir := shortDir(t)
	name := func(n int) string { return filepath.Join(dir, strings.Repeat("s", n-len(dir)-1)) }
	listen(t, name(maxPathLen)).Close()

	long := name(maxPathLen + 1)
	_, err := Listen(long)
	if err == nil {
		t.Fatal("Listen with too long a path succeeded")
	}
	for _, want := range []string{strconv.Itoa(maxPathLen + 1), "XDG_RUNTIME_DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := Dial(context.Background(), long); err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("Dial with too long a path = %v, want the same clear error", err)
	}
}

func TestListenRefusesUnsafeDir(t *testing.T) {
	dir := filepath.Join(shortDir(t), "open")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(filepath.Join(dir, "d.sock")); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("Listen in a world-writable dir = %v, want an error", err)
	}
	if os.Getuid() != 0 {
		return // only root can give a directory away
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(filepath.Join(dir, "d.sock")); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("Listen in another user's dir = %v, want an error", err)
	}
}

func TestDialNoDaemon(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Dial(ctx, filepath.Join(shortDir(t), "none.sock"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dial to missing socket = %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(shortDir(t), "d.sock")
	ln := listen(t, path)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := Dial(ctx, path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial to stale socket = %v, want ECONNREFUSED", err)
	}
}
