package upstream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"mcpx/internal/sock"
)

// writeQueue hands an upstream's outgoing messages to one writer goroutine,
// so that nothing in mcpx ever blocks on an upstream that stops reading its
// input: a send queues (bounded by bytes) and returns, timers and host
// cancels still fire, and the reader never waits on a write. The writer
// ends the connection when a write makes no progress for the stall time,
// or when the queue overflows.
//
// When the writer is idle and nothing is queued, a send writes its message
// itself, without waiting (one attempt, as much as the pipe takes), and
// leaves what is left to the writer: one goroutine hand-off less per
// request, and the order is the same. It does so only while it is alone
// (see shared): when other requests are under way, their messages come in
// bursts, and the writer joins a burst into one write, which costs the
// upstream one wake-up instead of one per message.
type writeQueue struct {
	limit int // bytes queued at most
	// try writes what it can of b without waiting (nil: the writer writes
	// everything). An error is left for the writer to meet again.
	try func(b []byte) int
	// shared reports whether other requests are under way (nil: never);
	// a send then leaves its message to the writer. It is called without
	// the queue's lock.
	shared func() bool

	mu      sync.Mutex
	items   [][]byte
	bytes   int
	writing bool  // a write is under way, by run or by a push
	err     error // once set, every push fails with it
	closed  bool
	wake    chan struct{}
	done    chan struct{} // closed when run returns
}

// errStalled ends a connection whose upstream stopped reading its input.
var errStalled = errors.New("stopped reading its input")

func newWriteQueue(limit int) *writeQueue {
	return &writeQueue{limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues one encoded message (its newline is added here), or writes
// it at once when the writer is idle and nothing is queued.
func (q *writeQueue) push(msg []byte) error {
	alone := q.try != nil && (q.shared == nil || !q.shared())
	q.mu.Lock()
	switch {
	case q.err != nil:
		q.mu.Unlock()
		return q.err
	case q.closed:
		q.mu.Unlock()
		return os.ErrClosed
	case q.bytes+len(msg)+1 > q.limit:
		q.err = fmt.Errorf("%w: %d bytes wait to be written", errStalled, q.bytes)
		q.mu.Unlock()
		return q.err
	}
	line := append(msg, '\n')
	if !alone || q.writing || len(q.items) > 0 {
		q.items = append(q.items, line)
		q.bytes += len(line)
		q.signal()
		q.mu.Unlock()
		return nil
	}
	q.writing = true
	q.mu.Unlock()
	n := q.try(line)
	q.mu.Lock()
	q.writing = false
	if n < len(line) { // the rest goes first
		rest := line[n:]
		q.items = append([][]byte{rest}, q.items...)
		q.bytes += len(rest)
	}
	if len(q.items) > 0 || q.closed {
		q.signal()
	}
	q.mu.Unlock()
	return nil
}

// signal wakes the writer. q.mu is held.
func (q *writeQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain closes the queue and waits up to d for what is queued to be
// written: on a graceful stop, a cancellation queued just before must reach
// the upstream before its stdin closes.
func (q *writeQueue) drain(d time.Duration) {
	q.close()
	select {
	case <-q.done:
	case <-time.After(d):
	}
}

// close lets run return once the queue is drained (or fails).
func (q *writeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.signal()
	q.mu.Unlock()
}

// run writes queued messages to w until the queue is closed and drained or
// a write fails. What is queued when the writer comes round goes out in one
// write. A write that makes no progress for stall fails with errStalled.
// fail is called once with the error that ended writing.
func (q *writeQueue) run(w *os.File, stall time.Duration, fail func(error)) {
	defer close(q.done)
	var out io.Writer = w
	if raw := sock.RawWriter(w); raw != nil {
		out = raw // see sock.RawReader
	}
	var buf []byte // a batch of several messages, joined
	for {
		// Let the goroutines that are ready to run (handlers about to
		// queue a request) go first: under load their messages join this
		// write; when nothing else is ready this returns at once.
		runtime.Gosched()
		q.mu.Lock()
		if q.writing || len(q.items) == 0 {
			// Idle, or a push is writing: it signals when it is done.
			end := q.closed && !q.writing && len(q.items) == 0
			q.mu.Unlock()
			if end {
				return
			}
			<-q.wake
			continue
		}
		batch := q.items
		q.items = nil
		q.writing = true
		q.mu.Unlock()
		next := batch[0]
		if len(batch) > 1 {
			buf = buf[:0]
			for _, b := range batch {
				buf = append(buf, b...)
			}
			next = buf
		}
		if err := writeAll(w, out, next, stall); err != nil {
			q.mu.Lock()
			if q.err == nil {
				q.err = err
			}
			err = q.err
			q.mu.Unlock()
			fail(err)
			return
		}
		clear(batch) // the messages are written: drop them
		q.mu.Lock()
		q.writing = false
		q.bytes -= len(next)
		if q.items == nil && cap(batch) <= maxKeptItems {
			q.items = batch[:0] // the next batch reuses the slice
		}
		q.mu.Unlock()
		if cap(buf) > maxKeptBatch {
			buf = nil
		}
	}
}

// maxKeptBatch is the largest batch buffer the writer keeps for the next.
const maxKeptBatch = 64 << 10

// maxKeptItems is the most messages a batch's slice, kept for the next
// batch, has room for.
const maxKeptItems = 1024

// writeAll writes b to out, f or a writer of its descriptor, allowing
// each chunk stall to get through.
func writeAll(f *os.File, out io.Writer, b []byte, stall time.Duration) error {
	for len(b) > 0 {
		if stall > 0 {
			_ = f.SetWriteDeadline(time.Now().Add(stall))
		}
		n, err := out.Write(b)
		b = b[n:]
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && n == 0 {
				return fmt.Errorf("%w for %s", errStalled, stall)
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return err
			}
		}
	}
	return nil
}
