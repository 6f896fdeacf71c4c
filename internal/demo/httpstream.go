package demo

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/sse"
)

// Bounds of a request's stream.
const (
	streamEvents  = 4096 // events a stream holds; a producer waits for a live connection beyond it
	keepDelivered = 64   // delivered events kept for a resumption when the buffer is full
	pumpBatch     = 256  // events copied out of the buffer at a time
)

var errStreamGone = errors.New("the request's stream is gone")

// sseEvent is one message of a request's stream.
type sseEvent struct {
	seq     int
	data    []byte
	resp    bool // the call's response: the last event
	isError bool // an error response
}

// stream is one request's response stream: the call's messages, in order,
// buffered until a connection writes them (JSON: only the response). A
// legacy SSE stream keeps its events for resumption by a GET with
// Last-Event-ID; it is written by one connection at a time, the latest to
// attach. It implements sink for the call.
type stream struct {
	h          *httpServer
	id         string                 // event id prefix ("3": ids "3-1", "3-2", ...); "" if not resumable
	sse        bool                   // an SSE stream; else one JSON response
	callID     jsonrpc.ID             // the request it answers
	onResponse func(*jsonrpc.Message) // called before the response is buffered; may be nil

	mu      sync.Mutex
	events  []sseEvent    // guarded by mu; oldest first
	next    int           // guarded by mu; seq of the next event (the first is 1)
	sent    int           // guarded by mu; highest seq written to a connection
	done    bool          // guarded by mu; the call ended: no more events
	gone    bool          // guarded by mu; nobody will read it (a 2026 client left): writes are dropped
	owner   int           // guarded by mu; the connection writing it; 0: none
	conns   int           // guarded by mu; connections attached so far
	waiters int           // guarded by mu; producers waiting for room
	wake    chan struct{} // guarded by mu; closed and replaced on every change
	dropped int           // guarded by mu; events dropped for want of room and reader
}

func (h *httpServer) newStream(id string, sse bool, callID jsonrpc.ID) *stream {
	return &stream{h: h, id: id, sse: sse, callID: callID, next: 1, wake: make(chan struct{})}
}

// Write buffers a message of the call.
func (st *stream) Write(m *jsonrpc.Message) error {
	if m.IsResponse() && st.onResponse != nil {
		st.onResponse(m)
	}
	return st.add(m.Encode(), m.IsResponse(), m.Error != nil)
}

// WriteRaw buffers a line that may not be JSON (the garbage tool): an SSE
// event of its own; dropped from a JSON answer.
func (st *stream) WriteRaw(line []byte) error { return st.add(bytes.Clone(line), false, false) }

// signalLocked wakes everyone waiting for a change. Its caller holds mu.
func (st *stream) signalLocked() {
	close(st.wake)
	st.wake = make(chan struct{})
}

// add buffers an event. When the buffer is full of undelivered events, it
// waits for the connection writing them, or drops the event if there is
// none; a response is never dropped.
func (st *stream) add(data []byte, resp, isError bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for {
		if st.gone || st.done {
			return errStreamGone
		}
		if !st.sse && !resp {
			return nil // a JSON answer carries only the response
		}
		if len(st.events) >= streamEvents {
			st.trimLocked()
		}
		if len(st.events) < streamEvents || resp {
			break
		}
		if st.owner == 0 {
			if st.dropped++; st.dropped == 1 {
				st.h.log.Warn("stream buffer full and no connection: dropping events", "request", st.callID.String())
			}
			return nil
		}
		wake := st.wake
		st.waiters++
		st.mu.Unlock()
		select {
		case <-wake:
		case <-st.h.stop:
		}
		st.mu.Lock()
		st.waiters--
		select {
		case <-st.h.stop:
			return errStopping
		default:
		}
	}
	st.events = append(st.events, sseEvent{seq: st.next, data: data, resp: resp, isError: isError})
	st.next++
	st.signalLocked()
	return nil
}

// trimLocked drops delivered events but the last keepDelivered. Its caller
// holds mu.
func (st *stream) trimLocked() {
	k := 0
	for k < len(st.events) && st.events[k].seq <= st.sent-keepDelivered {
		k++
	}
	st.events = slices.Delete(st.events, 0, k)
}

// finish marks the end of the call: no more events.
func (st *stream) finish() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	st.signalLocked()
}

// abandon drops the stream's events and every later one: nobody will read them.
func (st *stream) abandon() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gone, st.events = true, nil
	st.signalLocked()
}

// attach makes a new connection the stream's writer from the event after
// seq after; an earlier connection stops writing. It fails if the events
// after after are no longer (or not yet) there.
func (st *stream) attach(after int) (int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case after < 0 || after >= st.next:
		return 0, errors.New("no such event on this stream")
	case len(st.events) > 0 && after < st.events[0].seq-1,
		len(st.events) == 0 && after < st.next-1:
		return 0, errors.New("the events after it are no longer buffered")
	}
	st.conns++
	st.owner = st.conns
	st.signalLocked()
	return st.owner, nil
}

// detach ends conn's turn as the writer, if it still has it.
func (st *stream) detach(conn int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.owner == conn {
		st.owner = 0
		st.signalLocked()
	}
}

// delivered notes that the event seq was written to a connection.
func (st *stream) delivered(seq int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if seq > st.sent {
		st.sent = seq
		if st.waiters > 0 {
			st.signalLocked()
		}
	}
}

// eventID returns the SSE id of event seq; "" if the stream is not resumable.
func (st *stream) eventID(seq int) string {
	if st.id == "" {
		return ""
	}
	return st.id + "-" + strconv.Itoa(seq)
}

// How a connection's turn on a stream ended.
type pumpEnd int

const (
	endComplete   pumpEnd = iota // the stream is complete: the response (or the end of the call) went out
	endClosed                    // -sse-close-after: the server ends the connection before the stream's end
	endClientGone                // the client closed the connection, or a write failed
	endSuperseded                // a resumption took the stream over
	endStopping                  // the server is stopping
)

// pump writes the stream's events after seq after to w as SSE events,
// flushing each, until one of the ends above. closeAfter > 0 ends the
// connection after that many events (endClosed). It returns the seq of the
// last event written.
func (st *stream) pump(w http.ResponseWriter, r *http.Request, conn, after, closeAfter int) (pumpEnd, int) {
	rc := http.NewResponseController(w)
	cursor, n := after, 0
	for {
		st.mu.Lock()
		if st.owner != conn {
			st.mu.Unlock()
			return endSuperseded, cursor
		}
		var batch []sseEvent
		if len(st.events) > 0 {
			i := max(0, cursor+1-st.events[0].seq)
			batch = slices.Clone(st.events[min(i, len(st.events)):min(i+pumpBatch, len(st.events))])
		}
		done, wake := st.done, st.wake
		st.mu.Unlock()
		for _, ev := range batch {
			st.h.wire.line("> ", ev.data)
			if sse.WriteEvent(w, st.eventID(ev.seq), "", ev.data) != nil || rc.Flush() != nil {
				return endClientGone, cursor
			}
			cursor = ev.seq
			st.delivered(ev.seq)
			if ev.resp {
				return endComplete, cursor
			}
			if n++; closeAfter > 0 && n >= closeAfter {
				return endClosed, cursor
			}
		}
		if len(batch) > 0 {
			continue
		}
		if done {
			return endComplete, cursor
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return endClientGone, cursor
		case <-st.h.stop:
			return endStopping, cursor
		}
	}
}

// awaitJSON waits for the end of a JSON stream and returns its response
// (nil if the call ended without one).
func (st *stream) awaitJSON(r *http.Request) (pumpEnd, *sseEvent) {
	for {
		st.mu.Lock()
		done, wake := st.done, st.wake
		var resp *sseEvent
		if n := len(st.events); n > 0 && st.events[n-1].resp {
			ev := st.events[n-1]
			resp = &ev
		}
		st.mu.Unlock()
		if done {
			return endComplete, resp
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return endClientGone, nil
		case <-st.h.stop:
			return endStopping, nil
		}
	}
}
