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

// giveBack runs free once no note came for after, telling it whether a
// note of the burst was big. Each note (a line past 64 KiB, which costs far
// more than a timer) has a timer of its own, and only the last one's runs
// free: no timer is shared between callers.
type giveBack struct {
	after time.Duration
	free  func(big bool)
	mu    sync.Mutex
	last  uint64 // the last note's number
	big   bool   // a note since the last free was big
}

// longLines unmaps the idle mappings of long lines (rest.go) after every
// burst of them, and collects and returns the heap's free pages after a
// burst with a line of giveBackAt or more.
var longLines = &giveBack{after: time.Second, free: func(big bool) {
	unmapIdle()
	if big {
		debug.FreeOSMemory()
	}
}}

// note starts the wait over.
func (g *giveBack) note(big bool) {
	g.mu.Lock()
	g.last++
	n := g.last
	g.big = g.big || big
	g.mu.Unlock()
	time.AfterFunc(g.after, func() {
		g.mu.Lock()
		last, big := g.last == n, g.big
		if last {
			g.big = false
		}
		g.mu.Unlock()
		if last {
			g.free(big)
		}
	})
}
