package jsonrpc

import "syscall"

// lineRest holds the part of a long line past its first blockSize bytes,
// in anonymous memory mapped for that line and unmapped when the reader
// lets it go. On the heap, a line near the message limit would be garbage
// the moment it is copied out, and the runtime sizes its heap on what was
// live at its last collection: a host sending such lines has the heap's
// goal, and the pages the process holds, grow to about twice the limit,
// kept for minutes after (in a race-enabled build, the race detector's
// shadow of those addresses, about twice again, for good). A mapping is
// the kernel's again at once, whatever the collector does; untouched, it
// costs only addresses. Where mapping fails, the heap serves.
type lineRest struct {
	b      []byte
	mapped bool
}

// reserve makes room for up to n bytes.
func (l *lineRest) reserve(n int) {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		l.b = make([]byte, 0, blockSize)
		return
	}
	l.b, l.mapped = mem[:0], true
}

// add appends p; the reader adds no more than it reserved.
func (l *lineRest) add(p []byte) {
	if l.mapped && len(l.b)+len(p) > cap(l.b) {
		panic("jsonrpc: a line past the room reserved for it")
	}
	l.b = append(l.b, p...)
}

// release gives the memory back.
func (l *lineRest) release() {
	if l.mapped {
		syscall.Munmap(l.b[:cap(l.b)])
	}
	l.b, l.mapped = nil, false
}
