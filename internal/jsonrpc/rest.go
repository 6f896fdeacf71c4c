package jsonrpc

import (
	"sync"
	"syscall"
)

// lineRest holds the part of a long line past its first blockSize bytes,
// in anonymous memory mapped outside the Go heap. On the heap, a line near
// the message limit would be garbage the moment it is copied out, and the
// runtime sizes its heap on what was live at its last collection: a host
// sending such lines has the heap's goal, and the pages the process holds,
// grow to about twice the limit, kept for minutes after (in a race-enabled
// build, the race detector's shadow of those addresses, about twice
// again, for good). A mapping is let go when ReadLine returns: kept idle
// for the next long line on any reader (a burst of them touches the same
// pages), unmapped by the give-back a quiet second after the burst
// (giveback.go). Where mapping fails, the heap serves. What it saves: the
// heap's growth to about twice a long line, for minutes (shown by
// TestReaderLongLineMemory, and TestHostileStdio's RSS bound).
type lineRest struct {
	b      []byte
	mapped bool
}

// reserve makes room for up to n bytes.
func (l *lineRest) reserve(n int) {
	if mem := takeIdle(n); mem != nil {
		l.b, l.mapped = mem[:0], true
		return
	}
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

// release lets the memory go.
func (l *lineRest) release() {
	if l.mapped {
		putIdle(l.b[:cap(l.b)])
	}
	l.b, l.mapped = nil, false
}

// idle holds mappings no line uses, at most maxIdle.
var idle struct {
	sync.Mutex
	maps [][]byte
}

const maxIdle = 4

func takeIdle(n int) []byte {
	idle.Lock()
	defer idle.Unlock()
	for i, m := range idle.maps {
		if len(m) >= n {
			last := len(idle.maps) - 1
			idle.maps[i] = idle.maps[last]
			idle.maps[last] = nil
			idle.maps = idle.maps[:last]
			return m
		}
	}
	return nil
}

func putIdle(mem []byte) {
	idle.Lock()
	if len(idle.maps) < maxIdle {
		idle.maps = append(idle.maps, mem)
		idle.Unlock()
		return
	}
	idle.Unlock()
	syscall.Munmap(mem)
}

// unmapIdle gives the idle mappings back to the system.
func unmapIdle() {
	idle.Lock()
	maps := idle.maps
	idle.maps = nil
	idle.Unlock()
	for _, m := range maps {
		syscall.Munmap(m)
	}
}
