package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// host is the bench's side of one MCP connection: a raw JSON-RPC client
// (no SDK), so that what is measured is the path, not a client library.
// It is safe for concurrent use.
type host interface {
	// start sends a tools/call of tool with args (a JSON object) and
	// returns at once.
	start(tool string, args []byte, o startOpts) (*call, error)
	close()
}

// startOpts are a call's options.
type startOpts struct {
	// progress: the request carries a progress token and the call records
	// the progress it gets.
	progress bool
	// tag, if set, goes in the request's _meta as tagKey, for the
	// fixture's record of it: a gateway passes it on as it is, where it
	// gives requests ids and progress tokens of its own.
	tag string
}

// tagKey is the _meta member that carries startOpts.tag.
const tagKey = "dev.mcpx.bench/call"

// call is one tools/call in flight.
type call struct {
	id   int64
	sent time.Time // just before the request was written

	mu       sync.Mutex
	progress []float64 // progress values received before the result, in order
	late     int       // progress received after the result
	ended    bool

	done     chan struct{}
	answered time.Time // when the response was read
	result   json.RawMessage
	err      error

	// cancel cancels the call the way the path's protocol says, and
	// returns when it did so (just before the bytes left).
	cancel func() time.Time
	// abandon stops waiting (HTTP: closes the request's stream).
	abandon func()
}

func newCall(id int64) *call {
	return &call{id: id, done: make(chan struct{}), abandon: func() {}}
}

// addProgress records one progress value.
func (c *call) addProgress(v float64) {
	c.mu.Lock()
	if c.ended {
		c.late++
	} else {
		c.progress = append(c.progress, v)
	}
	c.mu.Unlock()
}

// finish records the response, once.
func (c *call) finish(at time.Time, result json.RawMessage, err error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	c.answered, c.result, c.err = at, result, err
	c.mu.Unlock()
	close(c.done)
}

// wait waits at most d for the response.
func (c *call) wait(d time.Duration) (json.RawMessage, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return c.result, c.err
	case <-t.C:
		return nil, fmt.Errorf("no response to call %d within %s", c.id, d)
	}
}

// latency is the time from request to response.
func (c *call) latency() time.Duration { return c.answered.Sub(c.sent) }

// rpcError is a JSON-RPC error response.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// envelope is a message as the bench's hosts decode it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// progressParams are the members of notifications/progress the bench reads.
type progressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
}

// requestLine encodes a tools/call request. meta holds extra _meta
// members (already encoded, without braces), or is empty.
func requestLine(id int64, tool string, args []byte, o startOpts, meta string) []byte {
	if o.tag != "" {
		tag := strconv.Quote(tagKey) + ":" + strconv.Quote(o.tag)
		if meta != "" {
			tag += ","
		}
		meta = tag + meta
	}
	token := o.progress
	b := make([]byte, 0, 160+len(args)+len(meta))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, tool)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	if token || meta != "" {
		b = append(b, `,"_meta":{`...)
		if token {
			b = append(b, `"progressToken":"p-`...)
			b = strconv.AppendInt(b, id, 10)
			b = append(b, '"')
			if meta != "" {
				b = append(b, ',')
			}
		}
		b = append(b, meta...)
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// tokenID returns the call id a progress token of requestLine names.
func tokenID(raw json.RawMessage) (int64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || len(s) < 3 || s[:2] != "p-" {
		return 0, false
	}
	n, err := strconv.ParseInt(s[2:], 10, 64)
	return n, err == nil
}

// cancelLine encodes notifications/cancelled for request id.
func cancelLine(id int64) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` +
		strconv.FormatInt(id, 10) + `,"reason":"bench: host cancelled"}}`)
}

// errClosed ends the calls of a host whose connection ended.
var errClosed = errors.New("connection closed")
