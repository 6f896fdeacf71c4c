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
// scavenger's pace.
const giveBackAt = 1 << 20

// giveBack runs free once after no note came for after.
type giveBack struct {
	after time.Duration
	free  func()
	mu    sync.Mutex
	timer *time.Timer
}

var longLines = &giveBack{after: time.Second, free: debug.FreeOSMemory}

// note (re)starts the wait.
func (g *giveBack) note() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer == nil {
		g.timer = time.AfterFunc(g.after, g.free)
		return
	}
	g.timer.Reset(g.after)
}
