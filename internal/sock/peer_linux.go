package sock

import (
	"fmt"
	"net"
	"syscall"
)

// PeerUID returns the user id of the process at the other end of c, as the
// kernel recorded it when the connection was made (SO_PEERCRED). c must be
// a unix socket connection, as returned by [Dial] or by Accept on [Listen]'s
// listener.
func PeerUID(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("read peer uid: %T is not a socket connection", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("read peer uid: %w", err)
	}
	var cred *syscall.Ucred
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return 0, fmt.Errorf("read peer uid: %w", err)
	}
	return int(cred.Uid), nil
}
