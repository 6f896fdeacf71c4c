package hostserver

import (
	"io"
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
type outQueue struct {
	mu        sync.Mutex
	wake      chan struct{} // capacity 1: "there is work"
	items     [][]byte
	byToken   map[string]int // token key -> index in items, past soft
	bytes     int            // queued, not yet handed to the writer
	soft      int            // the soft limit on bytes
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
	return &outQueue{wake: make(chan struct{}, 1), byToken: map[string]int{}, soft: softLimit}
}

// push queues a message that must be delivered.
func (q *outQueue) push(line []byte) { q.pushWhile(nil, line) }

// pushWhile is push for a message of a request that may be cancelled:
// nothing is queued once live (nil: always) reports false. live runs under
// the queue's lock, so the message either precedes everything queued
// after live turned false, or is dropped.
func (q *outQueue) pushWhile(live func() bool, line []byte) {
	q.mu.Lock()
	if !q.closed && (live == nil || live()) {
		q.items = append(q.items, line)
		q.bytes += len(line)
	}
	q.mu.Unlock()
	q.signal()
}

// pushProgress queues a progress notification for the token with key.
func (q *outQueue) pushProgress(key string, line []byte) { q.pushProgressWhile(nil, key, line) }

// pushProgressWhile is pushProgress for a request that may be cancelled;
// live works as for pushWhile.
func (q *outQueue) pushProgressWhile(live func() bool, key string, line []byte) {
	q.mu.Lock()
	if q.closed || live != nil && !live() {
		q.mu.Unlock()
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
	q.runBatches(func(batch [][]byte) error {
		buf = buf[:0]
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
// closed and drained. After a write error it discards the rest.
func (q *outQueue) run(write func([]byte) error) {
	q.runBatches(func(batch [][]byte) error {
		for _, line := range batch {
			if err := write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// runBatches hands what is queued to write, a batch at a time, until the
// queue is closed and drained. After a write error it discards the rest.
func (q *outQueue) runBatches(write func(batch [][]byte) error) {
	var batch [][]byte
	for {
		q.mu.Lock()
		batch, q.items = q.items, batch[:0]
		clear(q.byToken)
		q.bytes = 0
		closed := q.closed
		failed := q.err != nil
		q.mu.Unlock()
		if len(batch) > 0 && !failed {
			if err := write(batch); err != nil {
				q.mu.Lock()
				q.err = err
				q.mu.Unlock()
			}
		}
		clear(batch)
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-q.wake
		}
	}
}
