package cli

import (
	"fmt"
	"os"
	"sync"
)

// maxLogBytes is the size at which the daemon's log is rotated: the file
// becomes FILE.1 (replacing the one before) and a new FILE begins, so the
// log never holds more than twice this.
const maxLogBytes = 10 << 20

// logFile is an append-only log file rotated at a size. The process's
// stdout and stderr (a detached daemon's, where a panic would go) keep
// the file they were given, which becomes FILE.1. It is safe for
// concurrent use.
type logFile struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
}

func openLogFile(path string, max int64) (*logFile, error) {
	l := &logFile{path: path, max: max}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its
// size. A failed rotation keeps writing to the file it has.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		if err := os.Rename(l.path, l.path+".1"); err == nil {
			old := l.f
			if l.open() == nil {
				old.Close()
			} else {
				l.f = old
			}
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
