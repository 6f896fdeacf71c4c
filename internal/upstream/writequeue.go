package upstream

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// writeQueue hands an upstream's outgoing messages to one writer goroutine,
// so that nothing in mcpx ever blocks on an upstream that stops reading its
// input: a send queues (bounded by bytes) and returns, timers and host
// cancels still fire, and the reader never writes. The writer ends the
// connection when a write makes no progress for the stall time, or when the
// queue overflows.
type writeQueue struct {
	limit int // bytes queued at most

	mu     sync.Mutex
	items  [][]byte
	bytes  int
	err    error // once set, every push fails with it
	closed bool
	wake   chan struct{}
	done   chan struct{} // closed when run returns
}

// errStalled ends a connection whose upstream stopped reading its input.
var errStalled = errors.New("stopped reading its input")

func newWriteQueue(limit int) *writeQueue {
	return &writeQueue{limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues one encoded message (its newline is added here).
func (q *writeQueue) push(msg []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.err != nil:
		return q.err
	case q.closed:
		return os.ErrClosed
	case q.bytes+len(msg)+1 > q.limit:
		q.err = fmt.Errorf("%w: %d bytes wait to be written", errStalled, q.bytes)
		return q.err
	}
	q.items = append(q.items, append(msg, '\n'))
	q.bytes += len(msg) + 1
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
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
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run writes queued messages to w until the queue is closed and drained or
// a write fails. What is queued when the writer comes round goes out in one
// write. A write that makes no progress for stall fails with errStalled.
// fail is called once with the error that ended writing.
func (q *writeQueue) run(w *os.File, stall time.Duration, fail func(error)) {
	defer close(q.done)
	var buf []byte // a batch of several messages, joined
	for {
		q.mu.Lock()
		batch := q.items
		q.items = nil
		closed := q.closed
		q.mu.Unlock()
		if len(batch) == 0 {
			if closed {
				return
			}
			<-q.wake
			continue
		}
		out := batch[0]
		if len(batch) > 1 {
			buf = buf[:0]
			for _, b := range batch {
				buf = append(buf, b...)
			}
			out = buf
		}
		if err := writeAll(w, out, stall); err != nil {
			q.mu.Lock()
			if q.err == nil {
				q.err = err
			}
			err = q.err
			q.mu.Unlock()
			fail(err)
			return
		}
		q.mu.Lock()
		q.bytes -= len(out)
		q.mu.Unlock()
		if cap(buf) > maxKeptBatch {
			buf = nil
		}
	}
}

// maxKeptBatch is the largest batch buffer the writer keeps for the next.
const maxKeptBatch = 64 << 10

// writeAll writes b, allowing each chunk stall to get through.
func writeAll(w *os.File, b []byte, stall time.Duration) error {
	for len(b) > 0 {
		if stall > 0 {
			_ = w.SetWriteDeadline(time.Now().Add(stall))
		}
		n, err := w.Write(b)
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
