package demo

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// sink is where a call's messages go: the stdio output (a *jsonrpc.Writer)
// or, over HTTP, the request's own response stream.
type sink interface {
	Write(m *jsonrpc.Message) error
	WriteRaw(line []byte) error
}

// call is one request in flight, registered under its raw id text from the
// moment its line is read until its response is decided.
type call struct {
	id       jsonrpc.ID
	method   string
	tool     string          // for tools/call
	token    json.RawMessage // params._meta.progressToken; nil if none
	start    time.Time
	out      sink                    // where its progress and response go
	hdr      map[string]string       // over HTTP: the request headers that matter, decoded; nil on stdio
	stubborn bool                    // ignores notifications/cancelled (initialize, the stubborn tool)
	cancel   context.CancelCauseFunc // cancels the call's context; nil when stubborn

	mu        sync.Mutex
	cancelled bool // guarded by mu: the client cancelled it while it ran
	done      bool // guarded by mu: its response was sent or dropped
}

// clientCancel is the cause of a request context the client cancelled.
type clientCancel struct{ reason string }

func (e *clientCancel) Error() string {
	if e.reason == "" {
		return "cancelled by the client"
	}
	return "cancelled by the client: " + e.reason
}

// wasCancelled reports whether the client cancelled the call.
func (c *call) wasCancelled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled
}

// silencedLocked reports whether nothing more may be sent for c. Its caller holds c.mu.
func (c *call) silencedLocked() bool { return c.done || c.cancelled && !c.stubborn }

// notify writes a notification belonging to c, unless c has ended or was
// cancelled (stubborn calls keep talking until they end).
func (s *server) notify(c *call, m *jsonrpc.Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silencedLocked() {
		return false
	}
	c.out.Write(m) // a write error is sticky; the read loop ends at the peer's EOF
	return true
}

// respond writes c's response (m may be nil: none) unless c was cancelled,
// and ends c: nothing is sent for it afterwards, and its id is free again
// before the client can see the response. It reports whether m went out.
func (s *server) respond(c *call, m *jsonrpc.Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := m != nil && !c.silencedLocked()
	c.done = true
	s.unregister(c)
	if sent {
		c.out.Write(m)
	}
	return sent
}

// register adds c to the calls in flight; false if its id is already in use.
func (s *server) register(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.calls[c.id.String()]; ok {
		return false
	}
	s.calls[c.id.String()] = c
	return true
}

func (s *server) unregister(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, c.id.String())
}

// cancelled handles notifications/cancelled: it records the cancellation
// and cancels the request whose raw id text equals requestId.
func (s *server) cancelled(params json.RawMessage) {
	var p mcp.CancelledParams
	if err := json.Unmarshal(params, &p); err != nil {
		s.log.Warn("bad cancellation", "err", err)
		return
	}
	e := Event{Event: EventCancelled, RequestID: p.RequestID, Reason: p.Reason, Known: new(false)}
	s.mu.Lock()
	c := s.calls[string(p.RequestID)]
	s.mu.Unlock()
	if c == nil {
		s.log.Info("cancel of no running request", "id", string(p.RequestID), "reason", p.Reason)
		s.record(e)
		return
	}
	s.cancelCall(c, e)
}

// cancelCall records the cancellation e of c and cancels c unless it has
// ended (then e is recorded as unknown) or is stubborn.
func (s *server) cancelCall(c *call, e Event) {
	// Record under c.mu, so that the cancellation precedes the request's
	// finished event in the record.
	c.mu.Lock()
	known := !c.done
	if known {
		c.cancelled = true
		e.Method, e.Tool, e.Known = c.method, c.tool, new(true)
		e.ElapsedMs = new(time.Since(c.start).Milliseconds())
	}
	s.record(e)
	c.mu.Unlock()
	s.log.Info("cancelled", "id", string(e.RequestID), "reason", e.Reason, "tool", c.tool, "known", known, "stubborn", c.stubborn)
	if known && c.cancel != nil {
		c.cancel(&clientCancel{e.Reason})
	}
}
