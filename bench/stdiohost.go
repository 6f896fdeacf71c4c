package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stdioHost is a host on a newline-delimited JSON-RPC stream (a child's
// stdin and stdout).
type stdioHost struct {
	w    io.WriteCloser
	wmu  sync.Mutex
	ids  atomic.Int64
	meta string // _meta members of every tools/call (the 2026-07-28 stamp)

	mu      sync.Mutex
	pending map[int64]*call
	err     error
	done    chan struct{}
}

// newStdioHost opens a session on r and w: with modern, stateless
// 2026-07-28 (server/discover, then the _meta stamp on every request),
// else an initialized legacy (2025-11-25) session.
func newStdioHost(r io.Reader, w io.WriteCloser, modern bool) (*stdioHost, error) {
	h := &stdioHost{w: w, pending: map[int64]*call{}, done: make(chan struct{})}
	go h.read(r)
	if modern {
		h.meta = modernMeta
		c, err := h.request(`"method":"server/discover","params":{"_meta":{` + modernMeta + `}}`)
		if err != nil {
			return nil, err
		}
		res, err := c.wait(60 * time.Second)
		if err != nil {
			return nil, fmt.Errorf("server/discover: %w", err)
		}
		if !bytes.Contains(res, []byte(`"2026-07-28"`)) {
			return nil, fmt.Errorf("server/discover answered %s", res)
		}
		return h, nil
	}
	c, err := h.request(`"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpx-bench","version":"1"}}`)
	if err != nil {
		return nil, err
	}
	res, err := c.wait(60 * time.Second)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if !bytes.Contains(res, []byte(`"protocolVersion"`)) {
		return nil, fmt.Errorf("initialize answered %s", res)
	}
	if err := h.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *stdioHost) write(line []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err := h.w.Write(append(line, '\n'))
	return err
}

// request sends a request whose members after the id are rest.
func (h *stdioHost) request(rest string) (*call, error) {
	c := h.register()
	if c == nil {
		return nil, h.err
	}
	line := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(c.id, 10) + `,` + rest + `}`
	c.sent = time.Now()
	if err := h.write([]byte(line)); err != nil {
		return nil, err
	}
	return c, nil
}

func (h *stdioHost) register() *call {
	c := newCall(h.ids.Add(1))
	c.cancel = func() time.Time {
		t := time.Now()
		_ = h.write(cancelLine(c.id))
		return t
	}
	c.abandon = func() { h.forget(c) }
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil
	}
	h.pending[c.id] = c
	return c
}

func (h *stdioHost) start(tool string, args []byte, o startOpts) (*call, error) {
	c := h.register()
	if c == nil {
		return nil, h.err
	}
	line := requestLine(c.id, tool, args, o, h.meta)
	c.sent = time.Now()
	if err := h.write(line); err != nil {
		return nil, err
	}
	return c, nil
}

// read dispatches responses and progress until the stream ends.
func (h *stdioHost) read(r io.Reader) {
	defer close(h.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		at := time.Now()
		var m envelope
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "notifications/progress":
			var p progressParams
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			if id, ok := tokenID(p.Token); ok {
				h.mu.Lock()
				c := h.pending[id]
				h.mu.Unlock()
				if c != nil {
					c.addProgress(p.Progress)
				}
			}
		case m.Method == "" && m.ID != nil:
			id, err := strconv.ParseInt(string(m.ID), 10, 64)
			if err != nil {
				continue
			}
			h.mu.Lock()
			c := h.pending[id]
			delete(h.pending, id)
			h.mu.Unlock()
			if c == nil {
				continue
			}
			if m.Error != nil {
				c.finish(at, nil, m.Error)
			} else {
				c.finish(at, m.Result, nil)
			}
		}
	}
	h.mu.Lock()
	h.err = errClosed
	pending := h.pending
	h.pending = map[int64]*call{}
	h.mu.Unlock()
	for _, c := range pending {
		c.finish(time.Now(), nil, errClosed)
	}
}

// forget drops a call that will get no response (it was cancelled).
func (h *stdioHost) forget(c *call) {
	h.mu.Lock()
	delete(h.pending, c.id)
	h.mu.Unlock()
}

func (h *stdioHost) close() {
	h.w.Close()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
	}
}
