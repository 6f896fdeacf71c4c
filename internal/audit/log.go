package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Sink is where records are written: a file, the store's table.
type Sink interface {
	// Name names the sink in errors and log lines.
	Name() string
	// Write writes recs, in order, all or none (a sink that wrote some
	// and failed may write them again on a retry).
	Write(ctx context.Context, recs []Record) error
}

// Options configure a Log.
type Options struct {
	Sinks []Sink
	// Queue is how many records may wait (0: DefaultQueue).
	Queue int
	// FailOpen: a failed write drops its records, counted (Stats.Lost)
	// and logged. Otherwise (fail closed) they are kept and retried,
	// and Failing says why while any is unwritten.
	FailOpen bool
	// Replica names this gateway in its records.
	Replica string
	// Retry is how long a failed write waits before the next try (0:
	// one second).
	Retry time.Duration
	// Drain is how long Run tries to write what is left once ctx ends
	// (0: 5 s).
	Drain  time.Duration
	Logger *slog.Logger
}

// DefaultQueue is how many records wait for the writer by default.
const DefaultQueue = 4096

// batchMax is the most records written at once.
const batchMax = 512

// ErrQueueFull: the writer is behind by a whole queue.
var ErrQueueFull = errors.New("the audit queue is full")

// Log is the audit log.
type Log struct {
	opts Options
	log  *slog.Logger
	wake chan struct{}

	mu sync.Mutex
	q  []Record

	queued   atomic.Int64 // records not yet written, the writer's batch included
	failing  atomic.Pointer[error]
	written  atomic.Int64
	lost     atomic.Int64
	failures atomic.Int64
	lastWarn atomic.Int64 // unix nanoseconds of the last lost-records line
}

// New returns a log writing to opts.Sinks; Run writes.
func New(opts Options) *Log {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	if opts.Drain <= 0 {
		opts.Drain = 5 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Log{opts: opts, log: log, wake: make(chan struct{}, 1)}
}

// Add queues r, stamped with the time (unless set) and the replica. It
// never blocks nor writes. With the queue full a refusal's record, or
// any record of a log that fails open, is dropped and counted; failing
// closed, the record of an operation already admitted is queued beyond
// the bound (no new one is admitted meanwhile: Failing).
func (l *Log) Add(r Record) {
	if l == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Replica = l.opts.Replica
	if l.queued.Load() >= int64(l.opts.Queue) && (l.opts.FailOpen || r.Kind == KindRefusal) {
		l.drop(1, ErrQueueFull)
		return
	}
	l.mu.Lock()
	l.q = append(l.q, r)
	l.mu.Unlock()
	l.queued.Add(1)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Failing says why operations must be refused now: a log that fails
// closed and has records it could not write, or a full queue. nil when
// it fails open, or all is well.
func (l *Log) Failing() error {
	if l == nil || l.opts.FailOpen {
		return nil
	}
	if p := l.failing.Load(); p != nil {
		return *p
	}
	if l.queued.Load() >= int64(l.opts.Queue) {
		return ErrQueueFull
	}
	return nil
}

// Stats are a log's counts since it started.
type Stats struct {
	Written  int64 // records the writer is done with (every sink took them, or, failing open, some dropped them)
	Lost     int64 // records dropped (fail open, a full queue, a refusal beyond the queue)
	Failures int64 // failed writes of a sink
	Queued   int64 // records waiting
	Failing  bool  // a sink is failing now
}

// Stats returns the log's counts.
func (l *Log) Stats() Stats {
	if l == nil {
		return Stats{}
	}
	return Stats{Written: l.written.Load(), Lost: l.lost.Load(), Failures: l.failures.Load(),
		Queued: l.queued.Load(), Failing: l.failing.Load() != nil}
}

// drop counts n records lost, and says so in the log at most once a
// second.
func (l *Log) drop(n int, why error) {
	l.lost.Add(int64(n))
	now := time.Now().UnixNano()
	if last := l.lastWarn.Load(); now-last > int64(time.Second) && l.lastWarn.CompareAndSwap(last, now) {
		l.log.Error("audit records lost", "records", n, "lostSoFar", l.lost.Load(), "err", why)
	}
}

// Run writes queued records until ctx ends, then writes what is left
// (for at most Options.Drain), counts what it could not as lost, and
// returns nil.
func (l *Log) Run(ctx context.Context) error {
	var b batch
	for {
		select {
		case <-l.wake:
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opts.Drain)
			defer cancel()
			for l.write(dctx, &b) && l.wait(dctx) {
			}
			if n := l.queued.Load(); n > 0 {
				l.drop(int(n), fmt.Errorf("mcpx stopped before they could be written: %w", l.lastErr()))
			}
			return nil
		}
		for l.write(ctx, &b) && l.wait(ctx) {
		}
	}
}

// wait waits before the next write: the retry interval after a failed
// one, no time after a good one. It reports whether ctx is still live.
func (l *Log) wait(ctx context.Context) bool {
	if l.failing.Load() != nil {
		t := time.NewTimer(l.opts.Retry)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}

func (l *Log) lastErr() error {
	if p := l.failing.Load(); p != nil {
		return *p
	}
	return errors.New("no write failed")
}

// batch is the records being written, and which sinks took them.
type batch struct {
	recs []Record
	done []bool
}

// write writes one batch (the one a failure left, or the next) and
// reports whether there is more to do.
func (l *Log) write(ctx context.Context, b *batch) bool {
	if len(b.recs) == 0 {
		l.mu.Lock()
		n := min(len(l.q), batchMax)
		b.recs = append(b.recs[:0], l.q[:n]...)
		l.q = l.q[n:]
		if len(l.q) == 0 {
			l.q = nil
		}
		l.mu.Unlock()
		if n == 0 {
			return false
		}
		for i := range b.recs {
			if r := &b.recs[i]; r.args != nil {
				r.ArgsSHA256, r.args = ArgsHash(r.args), nil
			}
		}
		b.done = make([]bool, len(l.opts.Sinks))
	}
	var failed error
	for i, s := range l.opts.Sinks {
		if b.done[i] {
			continue
		}
		if err := s.Write(ctx, b.recs); err != nil {
			l.failures.Add(1)
			err = fmt.Errorf("writing the audit log to %s: %w", s.Name(), err)
			if l.opts.FailOpen {
				l.drop(len(b.recs), err)
				continue
			}
			failed = err
			continue
		}
		b.done[i] = true
	}
	if failed != nil {
		if l.failing.Load() == nil {
			l.log.Error("the audit log cannot be written: refusing tool calls until it can (mcpx.audit.onFailure is \"closed\")", "err", failed)
		}
		l.failing.Store(&failed)
		return true
	}
	if l.failing.Swap(nil) != nil {
		l.log.Info("the audit log is written again: tool calls are admitted")
	}
	n := len(b.recs)
	l.written.Add(int64(n))
	l.queued.Add(-int64(n))
	b.recs = b.recs[:0]
	l.mu.Lock()
	more := len(l.q) > 0
	l.mu.Unlock()
	return more
}
