package upstream

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/outq"
	"mcpx/internal/sock"
	"mcpx/internal/supervise"
)

// stdioTransport is a child process speaking newline-delimited JSON-RPC on
// its stdin and stdout.
type stdioTransport struct {
	server string
	limit  int // bytes of requests that may wait (sendLine)
	q      *outq.Queue
	proc   *supervise.Process
	stderr *stderrLog
}

// writeStall is how long a write to an upstream's stdin may make no
// progress before mcpx takes the upstream for wedged: long enough for a
// single-threaded server busy with one call, short enough that a stuck
// one is replaced.
const writeStall = time.Minute

// dialStdio starts srv's process and wires it to s. Its three goroutines
// (stdout reader, stderr reader, exit watcher) are counted in wg; the
// reader closes s.done when the upstream's output has ended.
func dialStdio(s *Session, srv *config.Server, opts dialOptions, wg *sync.WaitGroup) (*slog.Logger, error) {
	proc, err := supervise.Start(srv, opts.sup)
	if err != nil {
		return nil, err
	}
	log := opts.log.With("server", srv.Name, "pid", proc.PID())
	log.Info("upstream started", "command", srv.Command)
	// Four messages at the limit may wait (64 MiB at the default limit),
	// and never less than 1 MiB.
	limit := max(4*opts.maxMessage, 1<<20)
	s.conn = newConn(srv.Name, log)
	q := newWriteQueue(limit, sock.NowWriter(proc.Stdin), func() bool { return s.conn.Pending() > 1 })
	t := &stdioTransport{server: srv.Name, limit: limit, q: q, proc: proc, stderr: newStderrLog(srv.Name, opts.log)}
	s.conn.onNotify = s.notify
	s.conn.t = t
	s.t = t
	readerDone := make(chan struct{})
	wg.Add(4)
	go func() {
		defer wg.Done()
		runWriter(t.q, proc.Stdin, writeStall, func(err error) {
			// Unless the session already ended (then the write failed
			// because of it), the upstream stopped reading: end it.
			exit := &ExitError{Server: srv.Name, Status: err.Error()}
			if s.conn.fail(exit) == exit {
				log.Warn("upstream is not reading its input; stopping it", "err", err)
				proc.Kill()
			}
		})
	}()
	go func() { defer wg.Done(); t.stderr.run(proc.Stderr); proc.Stderr.Close() }()
	go func() { defer wg.Done(); t.watchExit(readerDone) }()
	go func() { defer wg.Done(); t.read(s, opts.maxMessage, readerDone, log) }()
	return log, nil
}

// send queues msg for the writer; it never waits for the upstream.
func (t *stdioTransport) send(_ *Request, msg *jsonrpc.Message) error { return t.q.Push(msg.Encode()) }

// sendLine queues a request, or refuses it while the queue is full.
func (t *stdioTransport) sendLine(line []byte) error {
	if err := t.q.PushBounded(line); err != outq.ErrFull {
		return err
	}
	return &QueueFullError{Server: t.server, Limit: t.limit}
}

func (t *stdioTransport) cancel(r *Request, reason string) bool {
	params := jsonrpc.MustMarshal(mcp.CancelledParams{RequestID: jsonrpc.NewIntID(r.ID).Raw(), Reason: reason})
	return t.q.Push(jsonrpc.NewNotification(mcp.MethodCancelled, params).Encode()) == nil
}

// stop flushes what is queued (a last cancellation) within grace, then
// stops the process as the spec says.
func (t *stdioTransport) stop(grace time.Duration) {
	t.q.Drain(grace)
	t.proc.Stop(grace)
}

func (t *stdioTransport) pid() int { return t.proc.PID() }

func (t *stdioTransport) stderrTail() string { return t.stderr.summary(tailLines) }

// read runs the connection's reader; when the upstream's output ends, the
// session ends and every waiting call fails with the exit status.
func (t *stdioTransport) read(s *Session, limit int, readerDone chan struct{}, log *slog.Logger) {
	var out io.Reader = t.proc.Stdout
	if raw := sock.RawReader(t.proc.Stdout); raw != nil {
		out = raw
	}
	err := s.conn.readLoop(jsonrpc.NewReader(out, limit))
	close(readerDone)
	status, alive := errClosedOutput.Error(), false
	select {
	case <-t.proc.Done():
		status = t.proc.ExitStatus()
	case <-time.After(reapGrace):
		alive = true // it closed stdout but lives on: useless as an MCP server
	}
	exit := &ExitError{Server: s.Server, Status: status, Stderr: t.stderr.summary(3)}
	if s.conn.fail(exit) == exit {
		log.Warn("upstream ended", "status", status, "readErr", err)
	}
	t.q.Close()
	if alive {
		t.proc.Stop(s.grace)
	}
	t.proc.Stdout.Close()
	close(s.done)
}

// exitGrace is how long an upstream's output may stay open after its
// process exited (a grandchild holds it) before mcpx kills the group.
const exitGrace = 200 * time.Millisecond

// reapGrace is how long mcpx waits, once an upstream's output has ended,
// for its process to be reaped, so that calls fail naming the real exit
// status. Exit and end of output come together unless the machine stalls;
// a process still alive after this closed its output on purpose.
const reapGrace = 2 * time.Second

// watchExit waits for the process. If its output stays open after it exited
// (a grandchild holds it), the group is killed and the output closed, so
// that calls fail at once instead of hanging.
func (t *stdioTransport) watchExit(readerDone chan struct{}) {
	t.proc.Wait()
	select {
	case <-readerDone:
	case <-time.After(exitGrace):
		t.proc.Kill()
		t.proc.Stdout.Close()
	}
}
