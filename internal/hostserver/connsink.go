package hostserver

import (
	"context"
	"io"

	"mcpx/internal/outq"
)

// softLimit is how many bytes one host may have queued before its progress
// is coalesced: a progress notification then replaces the not-yet-written
// one of its token where it stands (so it still precedes its call's
// result). Progress values only grow, so only intermediate values are
// lost, never the last, and never an order. 2 MiB holds a burst of about
// 20,000 progress notifications for a host that reads more slowly than
// the upstream writes, and is all a host that stops reading costs in
// progress (results and errors always queue).
const softLimit = 2 << 20

// newHostQueue is the ordered writer of one host's messages: a stream
// connection's (writeNow and shared set, see outq.Options) or one HTTP
// response's.
func newHostQueue(writeNow func([]byte) int, shared func() bool) *outq.Queue {
	return outq.New(outq.Options{WriteNow: writeNow, Shared: shared, CoalesceAt: softLimit})
}

// connSink is a stream connection's queue as the sink of its requests:
// the queue carries on after each.
type connSink struct{ q *outq.Queue }

func (s connSink) pushWhile(live func() bool, line []byte) { _ = s.q.PushWhile(live, line) }

func (s connSink) pushProgressWhile(live func() bool, key string, line []byte) {
	_ = s.q.PushKeyed(live, key, line)
}

func (connSink) finish()                      {}
func (s connSink) queue() *outq.Queue         { return s.q }
func (connSink) carriesRequests() bool        { return true }
func (connSink) hostContext() context.Context { return nil }

// maxKeptBatch is the largest batch buffer a writer keeps for the next: an
// idle host costs little.
const maxKeptBatch = 4 << 10

// writeStream writes q's messages to w, each with a newline, until q is
// closed and drained or a write fails: what is queued when the writer
// comes round goes out in one write.
func writeStream(q *outq.Queue, w io.Writer) {
	var buf []byte
	_ = q.Run(func(partial []byte, batch [][]byte) error {
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
