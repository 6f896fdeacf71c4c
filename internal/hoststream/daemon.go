package hoststream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sock"
)

// handoffTimeout bounds the wait for the descriptors after the upgrade,
// and each write of an event to serve.
const handoffTimeout = 10 * time.Second

// ServeHandoff is the daemon's side of the host's stdio link: it serves,
// with serveHost, a host whose stdin and stdout `mcpx serve` hands over on
// ctl (see apitype.HeaderHandoff). The daemon reads and writes the host's
// pipes itself, and ctl carries only the events serve needs to take the
// host back. It returns when the session has ended and serve was told
// why; it closes ctl.
func ServeHandoff(ctl *net.UnixConn, serveHost func(conn io.ReadWriteCloser) error, log *slog.Logger) {
	defer ctl.Close()
	_ = ctl.SetReadDeadline(time.Now().Add(handoffTimeout))
	fds, err := sock.ReceiveFiles(ctl, 3)
	if err != nil {
		log.Warn("host handoff: no descriptors", "err", err)
		return
	}
	var start apitype.HandoffStart
	if err := json.NewDecoder(ctl).Decode(&start); err != nil {
		log.Warn("host handoff: no start", "err", err)
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return
	}
	_ = ctl.SetReadDeadline(time.Time{})
	c, err := newHandoffConn(ctl, fds, &start)
	if err != nil {
		log.Warn("host handoff refused", "err", err)
		// Serve takes the host back, with what it had sent, and forwards.
		_ = writeEvent(ctl, &apitype.HandoffEvent{End: apitype.HandoffRefused, Rest: start.Rest})
		return
	}
	watched := make(chan struct{})
	go func() { // serve gone (killed, or stopping): end the session
		defer close(watched)
		var b [64]byte
		for {
			if _, err := ctl.Read(b[:]); err != nil {
				c.ctlGone.Store(true)
				c.Close()
				return
			}
		}
	}()
	if err := serveHost(c); err != nil {
		log.Warn("handed-off host ended with an error", "err", err)
	}
	c.Close()
	if !c.ctlGone.Load() {
		end := apitype.HandoffStopping
		if c.hostEOF.Load() {
			end = apitype.HandoffHostLeft
		}
		c.event(&apitype.HandoffEvent{End: end, Rest: c.unread()})
	}
	ctl.Close() // ends the watcher
	<-watched
	c.table.Close()
}

// handoffConn is a host's stdio handed off by serve, as a hostserver.Conn
// and Witness: it keeps the handoff table (requests read and not yet
// answered) as the session reads and writes.
type handoffConn struct {
	in, out  *os.File
	read     io.Reader        // in, with raw system calls (sock.RawReader)
	writeAll io.Writer        // out, with raw system calls (sock.RawWriter)
	writeNow func([]byte) int // out's (sock.NowWriter)
	table    *idTable
	ctl      *net.UnixConn

	hostEOF   atomic.Bool // the host closed its output
	ctlGone   atomic.Bool // serve's socket ended
	closeOnce sync.Once

	// Guarded by wmu, held while writing to the host.
	wmu     sync.Mutex
	midLine bool   // the last write ended inside a line
	lineID  string // that line's id if it is a response, else ""

	// Guarded by cmu, held while writing an event.
	cmu       sync.Mutex
	overflow  map[string]bool // ids sent as Add events, not yet as Remove
	overflowN atomic.Int32    // len(overflow), read without cmu

	sawInitialized bool   // the read goroutine's own
	pre            []byte // read before in: HandoffStart's; the read goroutine's own
	preSkip        int    // how much of pre is serve's replay, not the host's bytes
	preStarted     bool   // the session read from pre
	rest           []byte // Unread's; read after the session ended

	// dropReplay: the answer to a replayed initialize is still to come,
	// and is not written to the host (guarded by wmu).
	dropReplay bool
}

// newHandoffConn takes ownership of fds: the host's input, its output and
// the table file.
func newHandoffConn(ctl *net.UnixConn, fds []int, start *apitype.HandoffStart) (*handoffConn, error) {
	defer syscall.Close(fds[2]) // mapped, or refused
	for _, fd := range fds[:2] {
		if err := sock.CheckStream(fd); err != nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
			return nil, err
		}
	}
	table, err := mapTable(fds[2])
	if err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, err
	}
	// Non-blocking, so that the runtime's poller waits on them and Close
	// interrupts a read or a write.
	_ = syscall.SetNonblock(fds[0], true)
	_ = syscall.SetNonblock(fds[1], true)
	c := &handoffConn{
		in:       os.NewFile(uintptr(fds[0]), "host-stdin"),
		out:      os.NewFile(uintptr(fds[1]), "host-stdout"),
		table:    table,
		ctl:      ctl,
		overflow: map[string]bool{},
	}
	c.read = sock.RawReader(c.in)
	c.writeAll = sock.RawWriter(c.out)
	if c.writeAll == nil {
		c.writeAll = c.out
	}
	c.writeNow = sock.NowWriter(c.out)
	if start.Replay != nil {
		c.pre = append(append(c.pre, start.Replay...), '\n')
		c.dropReplay = true
	}
	if start.Initialized {
		c.pre = append(c.pre, mcp.InitializedNotification+"\n"...)
	}
	c.preSkip = len(c.pre)
	c.pre = append(c.pre, start.Rest...)
	return c, nil
}

// unread is what the session did not use of the host's stream, for serve:
// what its reader held (Unread), then what it never read of pre, less
// serve's own replay if the session read nothing at all (it never ran:
// the daemon was stopping).
func (c *handoffConn) unread() []byte {
	left := c.pre
	if !c.preStarted {
		left = left[min(c.preSkip, len(left)):]
	}
	return append(c.rest, left...)
}

func (c *handoffConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre, c.preStarted = c.pre[n:], true
		return n, nil
	}
	n, err := c.read.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		c.hostEOF.Store(true)
	case err != nil && c.ctlGone.Load():
		return n, io.EOF // serve left: as if the host had
	}
	return n, err
}

func (c *handoffConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.write(p, c.writeAll.Write)
}

// WriteNow writes what the host's pipe takes of p at once; 0 while another
// write is under way.
func (c *handoffConn) WriteNow(p []byte) int {
	if !c.wmu.TryLock() {
		return 0
	}
	defer c.wmu.Unlock()
	n, _ := c.write(p, func(b []byte) (int, error) { return c.writeNow(b), nil })
	return n
}

// write writes p with w and notes what went, leaving out the answer to a
// replayed initialize: the host had its own answer from an earlier
// daemon. It reports that answer's bytes as written.
func (c *handoffConn) write(p []byte, write func([]byte) (int, error)) (int, error) {
	w := func(b []byte) (int, error) {
		if len(b) == 0 {
			return 0, nil
		}
		// Partial until wrote says otherwise: a write that blocks (a
		// host that reads slowly) may be cut by the daemon's death at
		// any byte, and serve must then end the line before its own.
		// Killed after a whole write but before wrote, serve writes an
		// empty line, which readers skip.
		c.table.SetPartial(true)
		return write(b)
	}
	i, j := -1, -1
	if c.dropReplay {
		i, j = replayAnswer(p, c.midLine)
	}
	if i < 0 {
		n, err := w(p)
		c.wrote(p, n)
		return n, err
	}
	n, err := w(p[:i])
	c.wrote(p[:i], n)
	if n < i || err != nil {
		return n, err
	}
	c.dropReplay = false
	m, err := w(p[j:])
	c.wrote(p[j:], m)
	return j + m, err
}

// replayAnswer finds the line that answers a replayed initialize in p
// (from a line start: midLine says whether p starts inside a line) and
// returns where it starts and where the next line starts; -1 if none.
func replayAnswer(p []byte, midLine bool) (int, int) {
	prefix := []byte(`{"jsonrpc":"2.0","id":` + apitype.HandoffReplayID + `,`)
	for off := 0; off < len(p); {
		if midLine {
			k := bytes.IndexByte(p[off:], '\n')
			if k < 0 {
				return -1, -1
			}
			off += k + 1
		}
		midLine = true
		if bytes.HasPrefix(p[off:], prefix) {
			k := bytes.IndexByte(p[off:], '\n')
			if k < 0 {
				return off, len(p)
			}
			return off, off + k + 1
		}
	}
	return -1, -1
}

// wrote notes that p[:n] went to the host: each response whose newline
// went is answered. p holds whole lines from where a line starts (the
// host face writes whole lines; a partial write's rest comes next).
func (c *handoffConn) wrote(p []byte, n int) {
	off := 0
	for off < n {
		if !c.midLine {
			c.midLine = true
			c.lineID = ""
			if id, ok := jsonrpc.ResponseID(p[off:]); ok {
				c.lineID = id.String()
			}
		}
		i := bytes.IndexByte(p[off:n], '\n')
		if i < 0 {
			break
		}
		if c.lineID != "" {
			c.settle(c.lineID)
		}
		c.midLine = false
		off += i + 1
	}
	c.table.SetPartial(c.midLine)
}

// Close closes the daemon's descriptors of the host's pipes (serve keeps
// its own, so the host sees nothing).
func (c *handoffConn) Close() error {
	c.closeOnce.Do(func() {
		c.in.Close()
		c.out.Close()
	})
	return nil
}

// Saw (hostserver.Witness) tells the ledger what the host asks. It runs
// on the session's read goroutine, before the message is handled.
func (c *handoffConn) Saw(msg *jsonrpc.Message, line []byte) { saw(c, msg, line) }

// initialize (ledger) tells serve the host's initialize, to replay.
func (c *handoffConn) initialize(line []byte) {
	c.event(&apitype.HandoffEvent{Initialize: bytes.Clone(line)})
}

// initialized (ledger) tells serve, once, that the host sent
// notifications/initialized.
func (c *handoffConn) initialized() {
	if !c.sawInitialized {
		c.sawInitialized = true
		c.event(&apitype.HandoffEvent{Initialized: true})
	}
}

// Unread (hostserver.Witness) keeps what serve reads first if it takes
// the host back.
func (c *handoffConn) Unread(rest []byte) { c.rest = rest }

// request (ledger) records a request the session will answer: in the
// table, or if it has no room, in an event to serve.
func (c *handoffConn) request(id string) {
	if c.table.Add(id) == nil {
		return
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if !c.overflow[id] {
		c.overflow[id] = true
		c.overflowN.Add(1)
		c.eventLocked(&apitype.HandoffEvent{Add: json.RawMessage(id)})
	}
}

// settle (ledger) forgets a request that was answered or needs no answer.
func (c *handoffConn) settle(id string) {
	if c.table.Remove(id) || c.overflowN.Load() == 0 {
		return
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.overflow[id] {
		delete(c.overflow, id)
		c.overflowN.Add(-1)
		c.eventLocked(&apitype.HandoffEvent{Remove: json.RawMessage(id)})
	}
}

func (c *handoffConn) event(ev *apitype.HandoffEvent) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.eventLocked(ev)
}

// eventLocked writes ev to serve. If serve does not take it in time, it
// is gone or stuck: the session ends, as when serve's socket ends.
func (c *handoffConn) eventLocked(ev *apitype.HandoffEvent) {
	if c.ctlGone.Load() {
		return
	}
	if err := writeEvent(c.ctl, ev); err != nil {
		c.ctlGone.Store(true)
		c.Close()
	}
}

// writeEvent writes one event line to serve.
func writeEvent(ctl *net.UnixConn, ev *apitype.HandoffEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_ = ctl.SetWriteDeadline(time.Now().Add(handoffTimeout))
	_, err = ctl.Write(append(b, '\n'))
	return err
}
