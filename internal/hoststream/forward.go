package hoststream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// forwarder connects a host's stdio to the daemon. Where it can, it first
// hands the stdio to the daemon (handover.go), and forwards only if the
// daemon does not take it or gives it back. Forwarding, it reads both directions
// message by message, so that it knows which host requests await an answer:
// when the daemon's stream breaks (the daemon died or stopped), each of
// them is answered at once with an error instead of hanging, and the next
// message from the host reconnects (starting a daemon if none runs) and
// replays the host's initialize, so that the host's session goes on.
//
// While connected, the host's reader writes what it reads to the daemon
// itself, what arrived together in one write; only without a stream does
// it hand a message to run's loop, which reconnects, and waits until the
// loop has sent it, so that messages keep their order.
type forwarder struct {
	host io.ReadWriteCloser
	dial func(ctx context.Context) (Stream, error)
	// handoff, if set, first offers the host's stdio to the daemon
	// (handover.go).
	handoff   handOffFunc
	noHandoff bool // the daemon did not take the host: forward from then on
	// detach, if set, takes the host's stdio out of this process's poller
	// while the daemon has it (Stdio.Detach).
	detach  func()
	log     *slog.Logger
	maxLine int

	wmu sync.Mutex // serialises writes to the host

	// smu is held while the host's reader tracks and writes a batch, and
	// while run's loop changes stream: a batch is tracked before the
	// stream it went to is given up, so its requests are answered then.
	smu    sync.Mutex
	stream Stream // the daemon's stream for the reader; nil: hand to run

	state hostState // the host's pending requests and handshake
}

// replayID is the id of a replayed initialize; its answer is not relayed.
const replayID = apitype.HandoffReplayID

// run relays until the host leaves (nil) or ctx ends.
func (f *forwarder) run(ctx context.Context) error {
	if f.handoff == nil {
		first, err := f.dial(ctx)
		if err != nil {
			return err
		}
		_, err = f.forward(ctx, first)
		return err
	}
	// Hand the host to the daemon; forward when the daemon gives it back,
	// and hand it over again on the host's next message.
	var start *apitype.HandoffStart // what serve has of the host's stream; nil the first time
	for {
		first, hostLeft, err := f.handOff(ctx, start)
		if err != nil || hostLeft {
			return err
		}
		if start, err = f.forward(ctx, first); start == nil {
			return err
		}
	}
}

// forward relays on first (nil: connect on the host's next message) until
// the host leaves (nil) or ctx ends. If the host can be handed off and
// the daemon went away, it stops at the host's next message instead and
// returns what it had read of the host, to hand over with the host.
func (f *forwarder) forward(ctx context.Context, first Stream) (*apitype.HandoffStart, error) {
	hostLines := make(chan []byte) // framed lines the reader could not send itself
	sent := make(chan struct{})    // run's loop is done with the last of them
	hostErr := make(chan error, 1)
	writeErr := make(chan streamError, 1) // the reader's write to the daemon failed
	stopRead := make(chan struct{})
	regain := make(chan struct{})    // closed: the reader stops and hands its unread bytes on
	regained := make(chan []byte, 1) // the reader's unread bytes
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stopRead)
	handingOff := false
	defer func() {
		if !handingOff {
			f.host.Close() // unblocks the host reader on every way out
		}
	}()
	wg.Add(1)
	go func() { // the host's messages, what arrived together at a time
		defer wg.Done()
		r := jsonrpc.NewReader(f.host, f.maxLine)
		var batch []byte
		// flush sends the batch, itself or through run's loop; false:
		// run is returning.
		flush := func() bool {
			if len(batch) == 0 || f.send(batch, writeErr) {
				batch = batch[:0]
				return true
			}
			lines := bytes.Clone(batch)
			batch = batch[:0]
			select {
			case hostLines <- lines:
			case <-stopRead:
				return false
			}
			select {
			case <-sent:
				return true
			case <-regain:
				regained <- r.Unread()
				return false
			case <-stopRead:
				return false
			}
		}
		for {
			line, err := r.ReadLine()
			var over *jsonrpc.OversizeError
			if errors.As(err, &over) {
				if !flush() {
					return
				}
				// Answered here, as the daemon would: it never sees it.
				f.toHost(jsonrpc.NewError(over.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: %v", over)).Encode())
				continue
			}
			if err != nil {
				if flush() {
					hostErr <- err
				}
				return
			}
			batch = append(append(batch, line...), '\n')
			if len(batch) >= maxHostBatch || !r.LineBuffered() {
				if !flush() {
					return
				}
				if cap(batch) > maxHostBatch {
					batch = nil // do not pin a large request's buffer
				}
			}
		}
	}()

	var (
		stream Stream
		down   chan struct{} // closed when the daemon's stream ends; nil while disconnected
	)
	connect := func(s Stream) {
		stream, down = s, f.pump(s, &wg)
		select {
		case <-writeErr: // of a stream given up before: none comes after that
		default:
		}
		f.smu.Lock()
		f.stream = s
		f.smu.Unlock()
	}
	disconnect := func(why error) {
		if stream != nil {
			stream.Close() // ends a write of the reader's that waits
			<-down
			f.smu.Lock()
			f.stream = nil
			f.smu.Unlock()
			stream, down = nil, nil
		}
		f.answerPending(why)
	}
	connect(first)
	for {
		select {
		case lines := <-hostLines:
			if stream == nil && f.handoff != nil && !f.noHandoff {
				close(regain)
				handingOff = true
				return f.handoffStart(append(lines, <-regained...)), nil
			}
			if stream == nil {
				s, err := f.reconnect(ctx)
				if err != nil {
					f.trackAll(lines)
					f.answerPending(err)
					return nil, err
				}
				connect(s)
			}
			f.trackAll(lines)
			if _, err := stream.Write(lines); err != nil {
				disconnect(fmt.Errorf("the mcpx daemon's stream broke: %w", err))
			}
			sent <- struct{}{}
		case e := <-writeErr:
			if stream != nil && e.stream == stream { // not one given up since
				disconnect(fmt.Errorf("the mcpx daemon's stream broke: %w", e.err))
			}
		case <-down:
			disconnect(errors.New("the mcpx daemon went away (it stopped or died); the host's next request reconnects"))
			f.log.Warn("mcpx serve: the daemon's stream ended; reconnecting on the host's next message")
		case err := <-hostErr:
			// The host left (EOF): end its session in the daemon, which
			// cancels its calls, and let the daemon close the stream.
			if stream != nil {
				stream.CloseWrite()
				select {
				case <-down:
				case <-time.After(5 * time.Second):
				}
				stream.Close()
				<-down
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
				return nil, nil
			}
			return nil, err
		case <-ctx.Done():
			if stream != nil {
				stream.Close()
				<-down
			}
			return nil, nil
		}
	}
}

// pump copies the daemon's messages to the host until the stream ends;
// the returned channel is closed then.
func (f *forwarder) pump(stream Stream, wg *sync.WaitGroup) chan struct{} {
	done := make(chan struct{})
	if stream == nil {
		return done // never closes: nothing to read
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		r := jsonrpc.NewReader(stream, 0)
		// What arrives together goes to the host in one write: the
		// batch is flushed before the reader would wait for more.
		var batch []byte
		for {
			line, err := r.ReadLine()
			if err != nil {
				f.toHostRaw(batch)
				return
			}
			if f.answered(line) {
				batch = append(append(batch, line...), '\n')
			}
			if len(batch) > 0 && (len(batch) >= maxHostBatch || !r.LineBuffered()) {
				f.toHostRaw(batch)
				batch = batch[:0]
				if cap(batch) > maxHostBatch {
					batch = nil // do not pin a large result's buffer
				}
			}
		}
	}()
	return done
}

// maxHostBatch bounds what the forwarder gathers for one write to the host.
const maxHostBatch = 64 << 10

// send tracks framed lines and writes them to the daemon's stream, and
// reports whether it did; without a stream it does neither. A failed
// write is reported on failed for run's loop, which gives the stream up:
// the lines were tracked, so their requests are answered then.
func (f *forwarder) send(lines []byte, failed chan<- streamError) bool {
	f.smu.Lock()
	defer f.smu.Unlock()
	if f.stream == nil {
		return false
	}
	f.trackAll(lines)
	if _, err := f.stream.Write(lines); err != nil {
		select {
		case failed <- streamError{f.stream, err}:
		default: // one is enough
		}
	}
	return true
}

// streamError is a failed write to stream.
type streamError struct {
	stream Stream
	err    error
}

// trackAll tracks each of framed lines.
func (f *forwarder) trackAll(lines []byte) {
	for len(lines) > 0 {
		line, rest, _ := bytes.Cut(lines, []byte{'\n'})
		f.track(line)
		lines = rest
	}
}

// track tells the ledger what a host message asks for.
func (f *forwarder) track(line []byte) {
	if msg, err := jsonrpc.Decode(line); err == nil {
		saw(&f.state, msg, line)
	}
}

// answered notes a response going to the host; it reports false for the
// answer to a replayed initialize, which the host must not see. The
// daemon writes with jsonrpc's encoder: a response is recognised, and its
// id read, by how the line starts, without decoding the rest (a result
// may be large); every other line is a notification.
func (f *forwarder) answered(line []byte) bool {
	id, ok := jsonrpc.ResponseID(line)
	if !ok {
		return true
	}
	if id.String() == replayID {
		return false
	}
	f.state.settle(id.String())
	return true
}

func (f *forwarder) toHost(line []byte) {
	f.toHostRaw(append(line, '\n'))
}

// toHostRaw writes framed lines to the host.
func (f *forwarder) toHostRaw(lines []byte) {
	if len(lines) == 0 {
		return
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, _ = f.host.Write(lines)
}

// answerPending answers every request still waiting with an mcpx error.
func (f *forwarder) answerPending(why error) {
	for id := range f.state.take() {
		err := &jsonrpc.Error{Code: mcp.CodeUpstreamFailed, Message: "mcpx: " + why.Error(),
			Data: jsonrpc.MustMarshal(map[string]any{"mcpx": map[string]string{"kind": "daemon_gone"}})}
		f.toHost(jsonrpc.NewError(jsonrpc.IDFromRaw(id), err).Encode())
	}
}

// reconnect opens a new stream to the daemon (starting one if needed) and
// replays the host's handshake on it.
func (f *forwarder) reconnect(ctx context.Context) (Stream, error) {
	stream, err := f.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnecting to the mcpx daemon: %w", err)
	}
	if replay, initialized := f.state.replay(); replay != nil {
		if _, err := stream.Write(append(replay, '\n')); err != nil {
			stream.Close()
			return nil, fmt.Errorf("reconnecting to the mcpx daemon: %w", err)
		}
		if initialized {
			if _, err := stream.Write([]byte(mcp.InitializedNotification + "\n")); err != nil {
				stream.Close()
				return nil, fmt.Errorf("reconnecting to the mcpx daemon: %w", err)
			}
		}
	}
	f.log.Info("mcpx serve: reconnected to the daemon")
	return stream, nil
}
