package sock

import (
	"syscall"
	"unsafe"
)

// NowWriter returns a write to c that never waits: one attempt, which
// takes what fits in the kernel's buffer, and returns how much it wrote
// (0 when nothing fits, on any error, and past a write deadline: a writer
// that may wait meets the error again). It returns nil when c offers no
// raw access. c's descriptor must be non-blocking (pollable), as those of
// os.Pipe, net.Conn and mcpx serve's stdio are.
//
// A relay writes a message itself with it when its writer goroutine is
// idle, instead of waking that goroutine: one hand-off less per message.
func NowWriter(c syscall.Conn) func(b []byte) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	return func(b []byte) int {
		n := 0
		if len(b) == 0 {
			return 0
		}
		_ = rc.Write(func(fd uintptr) bool {
			// A raw call: the descriptor is non-blocking, so the write
			// never waits in the kernel (see RawReader).
			r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if e == 0 {
				n = int(r1)
			}
			return true // one attempt: never wait for room
		})
		return max(n, 0)
	}
}
