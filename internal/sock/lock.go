package sock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Lock takes an exclusive, non-blocking flock on the file at path, creating
// it with mode 0600 (and its directory with 0700) if missing. If the lock is
// held elsewhere, Lock fails at once with an error wrapping [ErrLocked] that
// names the holder's pid when known.
//
// The lock lasts until unlock is called or the process dies. It belongs to
// the open file, not to the process: a second Lock on the same path fails
// even within one process, and child processes do not inherit it (the file
// is opened close-on-exec). The holder writes its pid into the file. unlock
// is safe to call more than once; it leaves the file in place, since
// removing a lock file lets two processes lock two different files.
func Lock(path string) (unlock func() error, err error) {
	if err := prepareDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readPID(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if holder != "" {
				return nil, fmt.Errorf("lock %s: %w (pid %s)", path, ErrLocked, holder)
			}
			return nil, fmt.Errorf("lock %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is informative only; failing to write it does not lose the lock.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	var once sync.Once
	var unlockErr error
	return func() error {
		once.Do(func() {
			err := flock(f, syscall.LOCK_UN)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				unlockErr = fmt.Errorf("unlock %s: %w", path, err)
			}
		})
		return unlockErr
	}, nil
}

// flock applies op to f, retrying when a signal interrupts the call.
func flock(f *os.File, op int) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	err = raw.Control(func(fd uintptr) {
		for {
			opErr = syscall.Flock(int(fd), op)
			if opErr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return opErr
}

// readPID returns the pid the holder wrote into f, or "" if there is none.
func readPID(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	s := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(s); err != nil {
		return ""
	}
	return s
}
