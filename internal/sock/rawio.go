package sock

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// RawReader returns a reader of c that reads with raw system calls: what
// is there at once, or, when nothing is, after the runtime's poller says
// c is readable. It returns nil unless c's descriptor is non-blocking
// (then its Read never waits inside the kernel).
//
// An ordinary Read of a pollable file or socket tells the runtime it is
// entering a system call that may block, and when every P was idle that
// wakes the runtime's monitor thread, with a futex: a thread woken for
// every message a relay reads after it was idle, 5 % of mcpx serve's CPU
// at 32 calls in flight. A read of a non-blocking descriptor never
// blocks, so it needs none of that. Closing c (or a read deadline) ends a
// Read that waits, with an error, as for c's own Read. Saves that wake-up
// (BenchmarkRelayCall in internal/hostserver reads the upstream's pipe
// so; the host's stdio, in go run ./bench's daemon and inproc paths).
func RawReader(c syscall.Conn) io.Reader {
	rc, ok := nonBlocking(c)
	if !ok {
		return nil
	}
	return newRawReader(rc)
}

// RawWriter is RawReader for writes: each Write writes all of b, waiting
// for room with the runtime's poller (honouring a write deadline) between
// raw writes. It returns nil unless c's descriptor is non-blocking. It
// saves what RawReader saves (BenchmarkRelayCall in internal/hostserver
// writes the upstream's pipe so).
func RawWriter(c syscall.Conn) io.Writer {
	if rc, ok := nonBlocking(c); ok {
		return newRawWriter(rc)
	}
	return nil
}

// nonBlocking returns c's raw connection if its descriptor is
// non-blocking.
func nonBlocking(c syscall.Conn) (syscall.RawConn, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, false
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = e == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil {
		return nil, false
	}
	return rc, nonblock
}

// rawOp is one direction of raw I/O on a descriptor: the state of one
// Read or Write, and the function the poller calls, bound once (fn): a
// closure per call would be an allocation per message. mu keeps
// concurrent calls, which a stream has no use for, apart.
type rawOp struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // rawReader.read or rawWriter.write

	mu    sync.Mutex
	buf   []byte
	n     int
	errno syscall.Errno
}

// do runs one Read (write false) or Write with buf and returns how much
// it moved, the system call's error and the poller's.
func (o *rawOp) do(buf []byte, write bool) (int, syscall.Errno, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf, o.n, o.errno = buf, 0, 0
	var err error
	if write {
		err = o.rc.Write(o.fn)
	} else {
		err = o.rc.Read(o.fn)
	}
	o.buf = nil
	return o.n, o.errno, err
}

// rawReader is RawReader's reader.
type rawReader struct{ rawOp }

func newRawReader(rc syscall.RawConn) *rawReader {
	r := &rawReader{rawOp{rc: rc}}
	r.fn = r.read
	return r
}

func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	switch n, errno, err := r.do(p, false); {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	default:
		return n, nil
	}
}

// read is the poller's function of a Read: r.mu is held.
func (r *rawReader) read(fd uintptr) bool {
	p := r.buf
	for {
		r1, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == syscall.EINTR {
			continue
		}
		r.n, r.errno = int(r1), e
		if e == 0 && r1 > 0 {
			raceAcquireIO(fd)
		}
		return e != syscall.EAGAIN
	}
}

// rawWriter is RawWriter's writer; its n counts what is written.
type rawWriter struct{ rawOp }

func newRawWriter(rc syscall.RawConn) *rawWriter {
	w := &rawWriter{rawOp{rc: rc}}
	w.fn = w.write
	return w
}

func (w *rawWriter) Write(b []byte) (int, error) {
	written, errno, err := w.do(b, true)
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	return written, err
}

// write is the poller's function of a Write: w.mu is held.
func (w *rawWriter) write(fd uintptr) bool {
	b := w.buf
	raceReleaseIO(fd)
	for w.n < len(b) {
		rest := b[w.n:]
		r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch e {
		case 0:
			w.n += int(r1)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // wait for room
		default:
			w.errno = e
			return true
		}
	}
	return true
}
