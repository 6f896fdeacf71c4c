package hoststream

import (
	"context"
	"errors"
	"io"
	"os"

	"mcpx/internal/apitype"
)

// handOffFunc offers the host's stdio to the daemon with the table file
// table (see Options.HandOff).
type handOffFunc func(ctx context.Context, table *os.File, start *apitype.HandoffStart) (Events, Stream, error)

// handOff hands the host's stdin and stdout to the daemon, which then
// reads and writes them itself: one process less between host and
// upstream on every message. It returns when the daemon gives them back:
//
//   - host left: the host closed its output, or ctx ended; serve is done.
//   - a stream: the daemon did not take them; forward on the stream.
//   - neither: the daemon stopped or died. The requests it had read and
//     not answered are answered (as the forwarder answers its pending
//     ones), what it had read of the next message is put back before the
//     host's input, and the host's handshake is kept to replay. At the
//     host's next message the forwarder hands the host over again (or,
//     where it cannot, forwards, reconnecting).
//
// start is what serve has of the host's stream when it hands the host over
// again (nil the first time); if the host is not handed over, it is read
// again by the forwarder. An error is one of dialing the daemon, as the
// forwarder's dial; the requests in start are answered with it.
func (f *forwarder) handOff(ctx context.Context, start *apitype.HandoffStart) (stream Stream, hostLeft bool, err error) {
	forward := func(why error) (Stream, bool, error) {
		f.noHandoff = true
		if start != nil { // the forwarder reads it, reconnecting
			f.host = &prefixed{ReadWriteCloser: f.host, pre: start.Rest}
			return nil, false, nil
		}
		f.log.Warn("mcpx serve: forwarding the host's stdio instead of handing it to the daemon", "err", why)
		s, err := f.dial(ctx)
		return s, false, err
	}
	file, err := createTable()
	if err != nil {
		return forward(err)
	}
	defer file.Close()
	table, err := mapTable(int(file.Fd()))
	if err != nil {
		return forward(err)
	}
	defer table.Close()
	h, s, err := f.handoff(ctx, file, start)
	if err != nil {
		if start != nil {
			f.trackAll(start.Rest)
			f.answerPending(err)
		}
		return nil, false, err
	}
	if s != nil {
		if start == nil {
			f.noHandoff = true // an older daemon
			return s, false, nil
		}
		s.Close() // an older daemon: forward, replaying the handshake
		return forward(nil)
	}
	f.log.Debug("mcpx serve: handed the host's stdio to the daemon")
	if f.detach != nil {
		f.detach() // nothing reads or writes the host here until the daemon gives it back
	}

	stop := context.AfterFunc(ctx, func() { h.Close() })
	defer stop()
	overflow := map[string]bool{} // ids the daemon could not put in the table
	var end *apitype.HandoffEvent
	var readErr error
	for end == nil {
		ev, err := h.Next()
		if err != nil {
			readErr = err
			break
		}
		switch {
		case ev.Initialize != nil:
			f.state.initialize(ev.Initialize)
		case ev.Initialized:
			f.state.initialized()
		case ev.Add != nil:
			overflow[string(ev.Add)] = true
		case ev.Remove != nil:
			delete(overflow, string(ev.Remove))
		case ev.End != "":
			end = ev
		}
	}
	h.Close()
	if ctx.Err() != nil || end != nil && end.End == apitype.HandoffHostLeft {
		return nil, true, nil
	}
	if end != nil && end.End == apitype.HandoffRefused {
		f.noHandoff = true // this daemon will not take it again
	}

	// The daemon is done with the host's stdio (its socket closes only
	// once its session has ended, or with its process).
	why := errors.New("the mcpx daemon went away (it stopped or died); the host's next request reconnects")
	if end != nil {
		why = errors.New("the mcpx daemon stopped; the host's next request reconnects")
		f.log.Warn("mcpx serve: the daemon gave the host's stdio back; reconnecting on the host's next message")
	} else {
		f.log.Warn("mcpx serve: the daemon's socket ended (it died?); reconnecting on the host's next message", "err", readErr)
	}
	if table.Partial() {
		f.toHostRaw([]byte{'\n'}) // end the line it was writing
	}
	for _, id := range table.Pending() {
		f.state.request(id)
	}
	for id := range overflow {
		f.state.request(id)
	}
	f.answerPending(why)
	if end != nil && len(end.Rest) > 0 {
		f.host = &prefixed{ReadWriteCloser: f.host, pre: end.Rest}
	}
	return nil, false, nil
}

// handoffStart is what the next daemon needs of the host's stream: its
// handshake to replay, and rest, what serve read and did not send.
func (f *forwarder) handoffStart(rest []byte) *apitype.HandoffStart {
	if p, ok := f.host.(*prefixed); ok { // what it had not read of that yet
		rest = append(rest, p.pre...)
		f.host = p.ReadWriteCloser
	}
	start := &apitype.HandoffStart{Rest: rest}
	start.Replay, start.Initialized = f.state.replay()
	return start
}

// prefixed reads pre, what another reader had read of a stream, then the
// stream.
type prefixed struct {
	io.ReadWriteCloser
	pre []byte
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.ReadWriteCloser.Read(b)
}
