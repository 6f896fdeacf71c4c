// Package outq is the ordered writer of one connection: everything mcpx
// sends to one host, or to one stdio upstream, goes through a [Queue], so
// that messages leave in the order they were queued and no goroutine that
// has a message (a handler, a reader relaying progress, a timer) ever waits
// for the peer to read.
//
// A Queue holds lines without their newline. One goroutine, the writer,
// runs [Queue.Run] and hands what is queued to the caller's write function
// a batch at a time; the write function frames them. When the connection
// can write without waiting ([Options.WriteNow]) and the writer is idle
// with nothing queued, the goroutine that pushes writes its line itself,
// as much as the connection takes at once, and leaves the rest to the
// writer: one goroutine hand-off less per message, in the same order
// (BenchmarkRelayCall, ns/op, in internal/hostserver).
//
// Limits are the caller's: [Options.Limit] and [Options.Full] decide what a
// push does when too much waits, [Queue.PushBounded] refuses a line then
// (an upstream's new request: back-pressure), and
// [Options.CoalesceAt] lets a keyed push replace the queued line of the
// same key instead of queueing behind it (the host's progress).
//
// Concurrency: Push, PushKeyed, Close and Drain are safe from any
// goroutine; Run is called once, by the writer, whose owner waits for it
// (Done). The queue never closes the connection.
//
// The package knows nothing of JSON-RPC or MCP: a line is bytes.
package outq

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"
)

// Options are a queue's connection and policies. Every field may be zero.
type Options struct {
	// WriteNow writes what it can of b without waiting and returns how
	// much it wrote (nil: only the writer writes). An error is left for
	// the writer to meet again.
	WriteNow func(b []byte) int
	// Shared reports whether the connection has other requests under way
	// (nil: never); a push then leaves its line to the writer, which joins
	// a burst into one write: one wake-up of the peer instead of one per
	// message. It is called without the queue's lock.
	Shared func() bool
	// Limit is how many bytes may be queued or being written at once
	// (0: no limit). A push that would pass it calls Full.
	Limit int
	// Full is called, with the queue's lock held, with the bytes waiting
	// when a push would pass Limit. A non-nil error fails the queue: that
	// push and every later one return it (the writer writes on). nil
	// queues the line all the same.
	Full func(waiting int) error
	// CoalesceAt is how many queued bytes make a keyed push replace the
	// queued line of its key, where that line stands (0: never). Only the
	// lines still queued count, not those handed to the writer.
	CoalesceAt int
}

// Queue is one connection's ordered writer. Make it with [New].
type Queue struct {
	opts Options
	wake chan struct{} // capacity 1: "there is work"
	done chan struct{} // closed when Run returns

	mu        sync.Mutex
	partial   []byte   // the rest of a line a push wrote in part; it goes first
	items     [][]byte // framed lines, in order
	byKey     map[string]int
	bytes     int // queued: partial and items, each counted framed
	inflight  int // handed to the writer, not yet written
	writing   bool
	closed    bool
	err       error // once set, every push fails with it
	coalesced int64
}

// New returns an empty queue.
func New(opts Options) *Queue {
	return &Queue{opts: opts, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Push queues line, or writes it at once, framed (its newline appended in
// line's spare capacity if it has some), when the writer is idle and
// nothing is queued. The queue owns line from then on. It returns os.ErrClosed after Close, and the queue's
// error once it failed.
func (q *Queue) Push(line []byte) error { return q.PushWhile(nil, line) }

// PushWhile is Push for a message of a request that may be cancelled:
// nothing is queued once live (nil: always) reports false. live runs under
// the queue's lock, so the line either precedes everything queued after
// live turned false, or is dropped (and PushWhile returns nil).
func (q *Queue) PushWhile(live func() bool, line []byte) error {
	return q.push(live, "", false, line)
}

// PushKeyed is PushWhile for a line that a later one of the same key
// makes stale (a progress notification of one token): past CoalesceAt
// queued bytes it replaces the queued line of its key instead of queueing.
func (q *Queue) PushKeyed(live func() bool, key string, line []byte) error {
	return q.push(live, key, true, line)
}

// ErrFull refuses a bounded push past Limit; the queue carries on.
var ErrFull = errors.New("the queue is full")

// PushBounded is Push for a line that may wait for room (a new request to
// an upstream): past Limit bytes waiting it queues nothing and returns
// ErrFull, and the queue carries on; a full queue is back-pressure, not a
// broken peer. A line finding the queue empty always goes.
func (q *Queue) PushBounded(line []byte) error {
	q.mu.Lock()
	waiting := q.bytes + q.inflight
	if q.opts.Limit > 0 && waiting > 0 && waiting+len(line)+1 > q.opts.Limit && q.err == nil && !q.closed {
		q.mu.Unlock()
		return ErrFull
	}
	q.mu.Unlock()
	return q.push(nil, "", false, line)
}

func (q *Queue) push(live func() bool, key string, keyed bool, line []byte) error {
	alone := q.opts.WriteNow != nil && (q.opts.Shared == nil || !q.opts.Shared())
	q.mu.Lock()
	switch {
	case q.err != nil:
		q.mu.Unlock()
		return q.err
	case q.closed:
		q.mu.Unlock()
		return os.ErrClosed
	case live != nil && !live():
		q.mu.Unlock()
		return nil
	}
	if q.opts.Limit > 0 && q.bytes+q.inflight+len(line)+1 > q.opts.Limit && q.opts.Full != nil {
		if err := q.opts.Full(q.bytes + q.inflight); err != nil {
			q.err = err
			q.mu.Unlock()
			return err
		}
	}
	if alone && !q.writing && q.partial == nil && len(q.items) == 0 {
		q.writeHere(line) // unlocks
		return nil
	}
	if keyed && q.opts.CoalesceAt > 0 && q.bytes >= q.opts.CoalesceAt {
		if i, ok := q.byKey[key]; ok {
			q.bytes += len(line) - len(q.items[i]) // both unframed
			q.items[i] = line
			q.coalesced++
			q.mu.Unlock()
			return nil
		}
		if q.byKey == nil {
			q.byKey = map[string]int{} // most queues never pass the mark
		}
		q.byKey[key] = len(q.items)
	}
	q.items = append(q.items, line)
	q.bytes += len(line) + 1
	q.mu.Unlock()
	q.signal()
	return nil
}

// writeHere writes line as far as the connection takes it at once and
// leaves the rest to the writer. Pushes meanwhile queue behind it (and
// the writer waits for it). It is called with q.mu held and returns with
// it released.
func (q *Queue) writeHere(line []byte) {
	q.writing = true
	q.mu.Unlock()
	framed := append(line, '\n')
	n := q.opts.WriteNow(framed)
	q.mu.Lock()
	q.writing = false
	if n < len(framed) {
		q.partial = framed[n:]
		q.bytes += len(q.partial)
	}
	wake := q.partial != nil || len(q.items) > 0 || q.closed
	q.mu.Unlock()
	if wake {
		q.signal()
	}
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Close stops accepting lines; Run writes what is queued, then returns.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// Drain closes the queue and waits up to d for Run to return: on a
// graceful stop, a cancellation queued just before must reach the peer
// before its input closes.
func (q *Queue) Drain(d time.Duration) {
	q.Close()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
}

// Done is closed when Run has returned.
func (q *Queue) Done() <-chan struct{} { return q.done }

// Coalesced is how many keyed lines replaced a queued one.
func (q *Queue) Coalesced() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.coalesced
}

// maxKeptItems is the most lines a batch's slice, kept for the next batch,
// has room for.
const maxKeptItems = 1024

// Run hands what is queued to write, a batch at a time: partial, the rest
// of a line a push wrote in part, already framed (nil if none), then the
// lines queued after it, unframed. It does so until the queue is closed and drained, and
// returns nil; or until write fails, and returns the queue's error (the
// first: a Full error, else write's). Lines pushed meanwhile join the next
// batch. write must not keep batch.
func (q *Queue) Run(write func(partial []byte, batch [][]byte) error) error {
	defer close(q.done)
	var batch [][]byte
	for {
		// Let the goroutines that are ready to run (handlers about to
		// queue a message) go first: under load their lines join this
		// batch; when nothing else is ready this returns at once. Saves
		// writes and peer wake-ups under load (BenchmarkRelayCallParallel
		// in internal/hostserver; BenchmarkCallParallel in internal/e2e/bench).
		runtime.Gosched()
		q.mu.Lock()
		if q.writing || q.partial == nil && len(q.items) == 0 {
			// Idle, or a push is writing: it signals when it is done.
			end := q.closed && !q.writing && q.partial == nil && len(q.items) == 0
			q.mu.Unlock()
			if end {
				return nil
			}
			<-q.wake
			continue
		}
		partial := q.partial
		q.partial = nil
		batch, q.items = q.items, batch[:0]
		clear(q.byKey)
		q.inflight, q.bytes = q.bytes, 0
		q.writing = true
		q.mu.Unlock()
		err := write(partial, batch)
		clear(batch) // the lines are written: drop them
		if cap(batch) > maxKeptItems {
			batch = nil
		}
		q.mu.Lock()
		q.writing = false
		q.inflight = 0
		if err != nil {
			if q.err == nil {
				q.err = err
			}
			err = q.err
			q.mu.Unlock()
			return err
		}
		q.mu.Unlock()
	}
}
