package sock

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// SendFiles sends the descriptors fds over conn in one message (a single
// byte of data carries them), for the peer's [ReceiveFiles]. The peer gets
// its own descriptors of the same open files; the caller keeps its own.
func SendFiles(conn *net.UnixConn, fds ...int) error {
	n, oobn, err := conn.WriteMsgUnix([]byte{0}, syscall.UnixRights(fds...), nil)
	if err != nil {
		return fmt.Errorf("sending descriptors: %w", err)
	}
	if n != 1 || oobn == 0 {
		return errors.New("sending descriptors: short write")
	}
	return nil
}

// ReceiveFiles receives the n descriptors a peer sent with [SendFiles]. The
// caller owns them. Any other number of descriptors is an error, and any
// descriptors received are closed then.
func ReceiveFiles(conn *net.UnixConn, n int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4*(n+1))) // room for one too many, to tell
	_, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("receiving descriptors: %w", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("receiving descriptors: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) != n || flags&syscall.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, fmt.Errorf("receiving descriptors: got %d, want %d", len(fds), n)
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
	}
	return fds, nil
}

// CheckStream returns an error unless fd is a pipe or a socket: what the runtime's
// poller can wait on, and what a host gives the server it spawns.
func CheckStream(fd int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
		return nil
	}
	return fmt.Errorf("descriptor %d is not a pipe or a socket (mode %o)", fd, st.Mode)
}
