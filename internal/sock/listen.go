package sock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// probeTimeout bounds the dial that tells a live socket from a stale one.
const probeTimeout = time.Second

// Listen listens on the unix socket at path with mode 0600.
//
// It creates the parent directory with mode 0700 if missing and refuses one
// that another user owns or that group or others may write. If path exists
// and is a socket that accepts a connection, Listen fails with an error
// wrapping [ErrInUse]; if it is a socket that refuses connections, Listen
// removes it as stale and goes on; if it is anything else, Listen fails and
// leaves it alone. Closing the returned listener removes the socket file.
func Listen(path string) (net.Listener, error) {
	if err := checkPath(path); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := prepareDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Chmod after bind sets the mode whatever the umask; changing the umask
	// instead would race with every other goroutine creating files.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// removeStale clears the way for a new socket at path: nothing there is
// fine, a socket nobody accepts on is removed, anything else is an error.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("existing %v is not a socket; not removing it", fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, probeTimeout)
	switch {
	case err == nil:
		c.Close()
		return ErrInUse
	case errors.Is(err, syscall.EAGAIN):
		// A full accept backlog: someone is listening, just busy.
		return ErrInUse
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale socket: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("probe existing socket: %w", err)
	}
}

// Dial connects to the unix socket at path. Its errors are the net
// package's, so errors.Is(err, fs.ErrNotExist) or
// errors.Is(err, syscall.ECONNREFUSED) tells that no daemon is listening.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	if err := checkPath(path); err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}
