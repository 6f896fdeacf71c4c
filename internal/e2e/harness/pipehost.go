package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"

	"mcpx/internal/jsonrpc"
)

// PipeHost is a minimal JSON-RPC host on mcpx's stdio face: requests with
// fresh ids, each answered on a channel of its own.
type PipeHost struct {
	conn net.Conn

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *jsonrpc.Message
	readErr error
	done    chan struct{}
}

func NewPipeHost(conn net.Conn) *PipeHost {
	h := &PipeHost{conn: conn, pending: map[string]chan *jsonrpc.Message{}, done: make(chan struct{})}
	go h.read()
	return h
}

func (h *PipeHost) read() {
	defer close(h.done)
	r := jsonrpc.NewReader(h.conn, 64<<20)
	for {
		line, err := r.ReadLine()
		if err != nil {
			h.mu.Lock()
			h.readErr = err
			h.mu.Unlock()
			return
		}
		msg, err := jsonrpc.Decode(bytes.Clone(line))
		if err == nil && msg.ID.IsValid() && msg.Method == "elicitation/create" {
			h.acceptElicitation(msg)
			continue
		}
		if err != nil || !msg.ID.IsValid() || msg.Method != "" {
			continue // notifications (and anything malformed) are not the host's concern here
		}
		h.mu.Lock()
		ch := h.pending[msg.ID.String()]
		delete(h.pending, msg.ID.String())
		h.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
}

// acceptElicitation answers an elicitation/create that mcpx relays from
// the upstream as a user who accepts the form as offered would: every
// field with a default gets it (SEP-1034), the others are left out.
func (h *PipeHost) acceptElicitation(msg *jsonrpc.Message) {
	var p struct {
		RequestedSchema struct {
			Properties map[string]struct {
				Default json.RawMessage `json:"default"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	content := map[string]json.RawMessage{}
	for name, prop := range p.RequestedSchema.Properties {
		if len(prop.Default) > 0 {
			content[name] = prop.Default
		}
	}
	_ = h.write(map[string]any{"jsonrpc": "2.0", "id": msg.ID.Raw(), "result": map[string]any{"action": "accept", "content": content}})
}

func (h *PipeHost) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = h.conn.Write(append(b, '\n'))
	return err
}

func (h *PipeHost) notify(method string) {
	_ = h.write(map[string]any{"jsonrpc": "2.0", "method": method})
}

// call sends a request and returns its result, or its error as a
// *jsonrpc.Error.
func (h *PipeHost) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan *jsonrpc.Message, 1)
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.pending[jsonrpc.NewIntID(id).String()] = ch
	h.mu.Unlock()
	if err := h.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("writing to mcpx: %w", err)
	}
	select {
	case msg := <-ch:
		if msg.Error != nil {
			return nil, msg.Error
		}
		return msg.Result, nil
	case <-h.done:
		return nil, fmt.Errorf("mcpx closed the connection (%v)", h.readErr)
	case <-ctx.Done():
		return nil, fmt.Errorf("no response within the host's deadline: %w", ctx.Err())
	}
}

// MrtrRetry reads a tools/call result: if it is input_required, it returns
// the params of the retry a 2026-07-28 client makes (each elicitation
// accepted with {"confirmed": true}; requestState echoed exactly, and only
// if the result had one) and true. A result without resultType is
// complete.
func MrtrRetry(res json.RawMessage) (map[string]any, bool, error) {
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState *json.RawMessage `json:"requestState"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, false, fmt.Errorf("result %s: %w", res, err)
	}
	if r.ResultType != "input_required" {
		return nil, false, nil
	}
	responses := map[string]any{}
	for key, ir := range r.InputRequests {
		if ir.Method != "elicitation/create" {
			return nil, false, fmt.Errorf("the host answers elicitation only, not %s", ir.Method)
		}
		responses[key] = map[string]any{"action": "accept", "content": map[string]any{"confirmed": true}}
	}
	retry := map[string]any{"inputResponses": responses}
	if r.RequestState != nil {
		retry["requestState"] = *r.RequestState
	}
	return retry, true, nil
}
