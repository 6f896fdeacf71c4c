package jsonrpc

import (
	"runtime/debug"
	"sync"
	"time"
)

// giveBackAt is the length from which a line, once the reader lets it go,
// has the memory it took given back to the system: a quiet second after
// the last such line (on any reader), the runtime collects and returns
// its free pages (debug.FreeOSMemory), once for the burst. Without it, a
// line near the message limit (a host's, an upstream's result) leaves the
// heap's goal at about twice what was live when it was read, and the
// process keeps those pages from the system for minutes after the line
// is gone: until the runtime's periodic collection, then at its
// scavenger's pace. (A line over the limit never reaches the heap:
// rest.go.)
const giveBackAt = 1 << 20

// giveBack runs free once no note came for after. Each note has a timer
// of its own (a note is rare: a line of a MiB or more), and only the last
// one's runs free.
type giveBack struct {
	after time.Duration
	free  func()
	mu    sync.Mutex
	last  uint64 // the last note's number
}

var longLines = &giveBack{after: time.Second, free: debug.FreeOSMemory}

// note starts the wait over.
func (g *giveBack) note() {
	g.mu.Lock()
	g.last++
	n := g.last
	g.mu.Unlock()
	time.AfterFunc(g.after, func() {
		g.mu.Lock()
		last := g.last == n
		g.mu.Unlock()
		if last {
			g.free()
		}
	})
}
