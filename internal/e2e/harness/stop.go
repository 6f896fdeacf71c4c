package harness

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
)

// CodeStopping is the error code of a call ended by mcpx shutting down.
const CodeStopping = -31002

// LineHost is a minimal host on a process's stdio, for tests that manage
// the mcpx process themselves.
type LineHost struct {
	T    *testing.T
	W    io.Writer
	Wake chan struct{}
	Done chan struct{}

	Mu   sync.Mutex
	Recv []*jsonrpc.Message
}

func (h *LineHost) Read(r io.Reader) {
	defer close(h.Done)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		m, err := jsonrpc.Decode(append([]byte(nil), sc.Bytes()...))
		if err != nil {
			h.T.Errorf("mcpx sent a malformed message %q: %v", sc.Text(), err)
			continue
		}
		h.Mu.Lock()
		h.Recv = append(h.Recv, m)
		h.Mu.Unlock()
		select {
		case h.Wake <- struct{}{}:
		default:
		}
	}
}

func (h *LineHost) Send(line string) {
	h.T.Helper()
	if !json.Valid([]byte(line)) {
		h.T.Fatalf("invalid JSON: %s", line)
	}
	if _, err := io.WriteString(h.W, line+"\n"); err != nil {
		h.T.Fatalf("writing to mcpx: %v", err)
	}
}

// find returns the response to the request with raw id, if it came.
func (h *LineHost) find(rawID string) (*jsonrpc.Message, bool) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for _, m := range h.Recv {
		if m.IsResponse() && m.ID.String() == rawID {
			return m, true
		}
	}
	return nil, false
}

// Response waits for the response to the request with raw id.
func (h *LineHost) Response(rawID string) *jsonrpc.Message {
	h.T.Helper()
	deadline := time.NewTimer(WaitLong)
	defer deadline.Stop()
	for {
		if m, ok := h.find(rawID); ok {
			return m
		}
		select {
		case <-h.Wake:
		case <-h.Done:
			if m, ok := h.find(rawID); ok {
				return m
			}
			h.T.Fatalf("mcpx closed its output before answering %s", rawID)
		case <-deadline.C:
			h.T.Fatalf("no response to %s within %s", rawID, WaitLong)
		}
	}
}
