package sock

import (
	"sync"
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
// idle, instead of waking that goroutine: one hand-off less per message
// (BenchmarkRelayCall, ns/op, in internal/hostserver).
func NowWriter(c syscall.Conn) func(b []byte) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	w := &nowWriter{rc: rc}
	w.fn = w.write
	return w.Write
}

// nowWriter is NowWriter's write, bound as rawReader is: a closure per
// write would be an allocation per message written.
type nowWriter struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // w.write

	mu sync.Mutex
	b  []byte
	n  int
}

func (w *nowWriter) Write(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b, w.n = b, 0
	_ = w.rc.Write(w.fn)
	w.b = nil
	return max(w.n, 0)
}

// write is the poller's function of a Write: w.mu is held.
func (w *nowWriter) write(fd uintptr) bool {
	// A raw call: the descriptor is non-blocking, so the write never
	// waits in the kernel (see RawReader).
	raceReleaseIO(fd)
	r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.b[0])), uintptr(len(w.b)))
	if e == 0 {
		w.n = int(r1)
	}
	return true // one attempt: never wait for room
}
