package hostserver

import (
	"io"
	"runtime"
	"sync"
)

// outQueue orders everything written to one host and decouples the writers
// (handlers, upstream readers relaying progress) from a host that reads
// slowly. Messages leave in the order they were queued. Memory stays
// bounded: beyond softLimit queued bytes, a progress notification
// replaces the not-yet-written one of the same token instead of queueing
// behind it (its position is kept, so it still precedes its call's result).
// Progress values only grow, so only intermediate values are lost, never the
// last, and never an order.
//
// When the connection can write without waiting (writeNow) and the writer
// is idle with nothing queued, the goroutine that has a message writes it
// itself, as much as the connection takes at once, and leaves the rest to
// the writer (partial): one hand-off less per answer, in the same order.
// It does so only while its request is the host's only one (see shared):
// with many in flight, answers come in bursts, and the writer joins a
// burst into one write, one wake-up of the host instead of one per answer.
type outQueue struct {
	// writeNow writes what it can of b at once (nil: the writer writes
	// everything; see runStream).
	writeNow func(b []byte) int
	// shared reports whether the host has other requests in flight (nil:
	// never); a message is then left to the writer. It is called without
	// the queue's lock.
	shared func() bool

	mu        sync.Mutex
	wake      chan struct{} // capacity 1: "there is work"
	partial   []byte        // the rest of a message written in part, framed; it goes first
	items     [][]byte
	byToken   map[string]int // token key -> index in items, past soft; made then
	bytes     int            // queued, not yet handed to the writer
	soft      int            // the soft limit on bytes
	writing   bool           // a write is under way, by the writer or by a push
	closed    bool
	coalesced int64
	err       error
}

// softLimit is how many bytes one host may have queued before its progress
// is coalesced: 2 MiB holds a burst of about 20,000 progress notifications
// for a host that reads more slowly than the upstream writes, and is all a
// host that stops reading costs in progress (results and errors always
// queue).
const softLimit = 2 << 20

func newOutQueue() *outQueue {
	return &outQueue{wake: make(chan struct{}, 1), soft: softLimit}
}

// push queues a message that must be delivered.
func (q *outQueue) push(line []byte) { q.pushWhile(nil, line) }

// pushWhile is push for a message of a request that may be cancelled:
// nothing is queued once live (nil: always) reports false. live runs under
// the queue's lock, so the message either precedes everything queued
// after live turned false, or is dropped.
func (q *outQueue) pushWhile(live func() bool, line []byte) {
	alone := q.alone()
	q.mu.Lock()
	if !q.closed && (live == nil || live()) {
		if alone && q.idle() {
			q.writeHere(line) // unlocks
			return
		}
		q.items = append(q.items, line)
		q.bytes += len(line)
	}
	q.mu.Unlock()
	q.signal()
}

// alone reports whether a push may write its message itself as far as
// the host's other requests go. q.mu is not held.
func (q *outQueue) alone() bool {
	return q.writeNow != nil && (q.shared == nil || !q.shared())
}

// idle reports whether a push may write its message itself: the
// connection can write without waiting, nothing is queued or being
// written, and no write failed. q.mu is held.
func (q *outQueue) idle() bool {
	return q.writeNow != nil && !q.writing && q.partial == nil && len(q.items) == 0 && q.err == nil
}

// writeHere writes line, framed, as much as the connection takes at once,
// and leaves the rest to the writer. Pushes meanwhile queue behind it (and
// the writer waits for it). q.mu is held, and unlocked on return.
func (q *outQueue) writeHere(line []byte) {
	q.writing = true
	q.mu.Unlock()
	framed := append(line, '\n')
	n := q.writeNow(framed)
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

// pushProgress queues a progress notification for the token with key.
func (q *outQueue) pushProgress(key string, line []byte) { q.pushProgressWhile(nil, key, line) }

// pushProgressWhile is pushProgress for a request that may be cancelled;
// live works as for pushWhile.
func (q *outQueue) pushProgressWhile(live func() bool, key string, line []byte) {
	alone := q.alone()
	q.mu.Lock()
	if q.closed || live != nil && !live() {
		q.mu.Unlock()
		return
	}
	if alone && q.idle() {
		q.writeHere(line) // unlocks
		return
	}
	if q.bytes >= q.soft {
		if i, ok := q.byToken[key]; ok {
			q.bytes += len(line) - len(q.items[i])
			q.items[i] = line
			q.coalesced++
			q.mu.Unlock()
			return
		}
		if q.byToken == nil {
			q.byToken = map[string]int{} // most queues never pass soft
		}
		q.byToken[key] = len(q.items)
	}
	q.items = append(q.items, line)
	q.bytes += len(line)
	q.mu.Unlock()
	q.signal()
}

// finish is the sink's end of one request: the connection's queue
// carries on.
func (q *outQueue) finish() {}

func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close stops accepting messages; run writes what is queued, then returns.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// runStream writes queued messages to w, each with a newline, until the
// queue is closed and drained: what is queued when the writer comes round
// goes out in one write. After a write error it discards the rest.
func (q *outQueue) runStream(w io.Writer) {
	var buf []byte
	q.runBatches(func(partial []byte, batch [][]byte) error {
		buf = append(buf[:0], partial...)
		for _, line := range batch {
			buf = append(append(buf, line...), '\n')
		}
		_, err := w.Write(buf)
		if cap(buf) > maxKeptBatch {
			buf = nil // do not pin a large result's buffer
		}
		return err
	})
}

// maxKeptBatch is the largest batch buffer a writer keeps for the next: an
// idle host costs little.
const maxKeptBatch = 4 << 10

// run writes queued messages with write, one at a time, until the queue is
// closed and drained. After a write error it discards the rest. The queue
// must not write by itself (writeNow nil).
func (q *outQueue) run(write func([]byte) error) {
	q.runBatches(func(_ []byte, batch [][]byte) error {
		for _, line := range batch {
			if err := write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// runBatches hands what is queued to write, a batch at a time (after the
// rest of a message a push wrote in part, framed), until the queue is
// closed and drained. After a write error it discards the rest.
func (q *outQueue) runBatches(write func(partial []byte, batch [][]byte) error) {
	var batch [][]byte
	for {
		// Let the goroutines that are ready to run (handlers about to
		// queue an answer) go first: under load their messages join this
		// batch; when nothing else is ready this returns at once.
		runtime.Gosched()
		q.mu.Lock()
		if q.writing || q.partial == nil && len(q.items) == 0 {
			// Idle, or a push is writing: it signals when it is done.
			end := q.closed && !q.writing && q.partial == nil && len(q.items) == 0
			q.mu.Unlock()
			if end {
				return
			}
			<-q.wake
			continue
		}
		partial := q.partial
		q.partial = nil
		batch, q.items = q.items, batch[:0]
		clear(q.byToken)
		q.bytes = 0
		failed := q.err != nil
		q.writing = true
		q.mu.Unlock()
		var err error
		if !failed {
			err = write(partial, batch)
		}
		clear(batch)
		q.mu.Lock()
		q.writing = false
		if err != nil {
			q.err = err
		}
		q.mu.Unlock()
	}
}
