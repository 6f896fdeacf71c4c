// Package sock owns the daemon's unix socket and its lock file: the local
// security boundary between mcpx clients and the daemon.
//
// Contracts:
//
//   - [Listen] creates the socket with mode 0600 in a directory owned by the
//     current user and not writable by group or others (created 0700 when
//     missing). It removes an existing path only when that path is a socket
//     that refuses connections (left by a daemon that died); it never removes
//     anything else. The returned listener removes the socket file on Close.
//   - [CheckPeer] is the second fence: the accept side calls it on each
//     connection to refuse peers running as another user (root excepted).
//     It also covers the instant between bind and chmod, when the socket's
//     mode is still the umask's.
//   - [Lock] takes an exclusive flock on a lock file. The lock, not the
//     socket, decides which daemon owns a socket path and its state: take it
//     before [Listen], hold it for the daemon's life. The kernel releases it
//     when the process dies, however it dies. The lock file is never removed.
//
// Concurrency: every function is safe for concurrent use. Two processes
// calling [Listen] on one path at the same time can race on a stale socket;
// holding [Lock] first is what excludes that.
package sock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

var (
	// ErrInUse reports that a process is already accepting connections on
	// the socket path given to [Listen].
	ErrInUse = errors.New("another process is listening")

	// ErrLocked reports that another open lock file (usually another
	// process) holds the lock [Lock] asked for.
	ErrLocked = errors.New("locked by another process")
)

// maxPathLen is the longest socket path the kernel accepts: sun_path less
// its terminating NUL (107 bytes on Linux, 103 on the BSDs and macOS).
var maxPathLen = len(syscall.RawSockaddrUnix{}.Path) - 1

// checkPath rejects socket paths the kernel would refuse or that name no file.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("empty socket path")
	case path[0] == '@' || path[0] == 0:
		return fmt.Errorf("socket path %q is abstract; want a file path", path)
	case len(path) > maxPathLen:
		return fmt.Errorf("socket path %q is %d bytes, over the %d-byte limit of unix sockets; set XDG_RUNTIME_DIR to a shorter directory",
			path, len(path), maxPathLen)
	}
	return nil
}

// prepareDir creates dir with mode 0700 if it is missing and checks that it
// is a directory owned by the current user and not writable by group or
// others, so that no other user can replace what we put in it.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("check directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("directory %s is owned by uid %d, not by uid %d", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("directory %s has mode %v, writable by group or others; want 0700", dir, fi.Mode().Perm())
	}
	return nil
}
