package upstream

import (
	"fmt"
	"io"
	"os"
	"time"

	"mcpx/internal/outq"
	"mcpx/internal/sock"
)

// newWriteQueue is the ordered writer of an upstream's stdin. A send
// queues and returns, so that nothing in mcpx ever blocks on an upstream
// that stops reading: timers and host cancels still fire, and the reader
// never waits on a write. Past limit bytes waiting, a new request is
// refused as busy ([QueueFullError]) while the upstream reads what waits;
// cancellations and answers always queue. An upstream is taken for
// wedged only when a write makes no progress for the stall time
// (runWriter). When try can write without waiting and shared says the
// request is alone, a send writes its message itself.
func newWriteQueue(limit int, try func([]byte) int, shared func() bool) *outq.Queue {
	return outq.New(outq.Options{WriteNow: try, Shared: shared, Limit: limit})
}

// QueueFullError refuses a request to an upstream whose input queue is
// full: the upstream is reading, more slowly than requests come. The
// request was not sent; the caller may retry.
type QueueFullError struct {
	Server string
	Limit  int
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("upstream %q is busy: %d bytes of requests wait to be written to its input (limit %d); try again", e.Server, e.Limit, e.Limit)
}

// maxKeptBatch is the largest batch buffer the writer keeps for the next.
const maxKeptBatch = 64 << 10

// runWriter writes q's messages to w, each with its newline, until q is
// closed and drained or a write fails; a write that makes no progress for
// stall fails with outq.ErrStalled. fail is called once with the error that
// ended writing.
func runWriter(q *outq.Queue, w *os.File, stall time.Duration, fail func(error)) {
	var out io.Writer = w
	if raw := sock.RawWriter(w); raw != nil {
		out = raw // see sock.RawReader
	}
	var buf []byte // a batch of several messages, joined
	err := q.Run(func(partial []byte, batch [][]byte) error {
		var next []byte
		if partial == nil && len(batch) == 1 {
			next = append(batch[0], '\n') // one message: no copy
		} else {
			buf = append(buf[:0], partial...)
			for _, b := range batch {
				buf = append(append(buf, b...), '\n')
			}
			next = buf
		}
		err := outq.WriteStalling(w, out, next, stall)
		if cap(buf) > maxKeptBatch {
			buf = nil
		}
		return err
	})
	if err != nil {
		fail(err)
	}
}
