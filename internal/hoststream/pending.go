package hoststream

import (
	"bytes"
	"sync"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// ledger is what either side of the link learns of the host's session:
// which of its requests await an answer, and its handshake. Serve keeps
// one (hostState) while it forwards or takes the host back; the daemon
// keeps one (handoffConn: the handoff table) while it has the host. Both
// learn it through saw, from messages already decoded.
type ledger interface {
	request(id string) // a request was read: it awaits an answer
	settle(id string)  // it was answered, or cancelled: it never will be
	initialize(line []byte)
	initialized()
}

// saw tells l what one host message means for it. A replayed initialize
// (serve's, not the host's) means nothing.
func saw(l ledger, msg *jsonrpc.Message, line []byte) {
	switch {
	case msg.IsRequest() && msg.ID.String() == apitype.HandoffReplayID:
	case msg.IsRequest():
		if msg.Method == mcp.MethodInitialize {
			l.initialize(line)
		}
		l.request(msg.ID.String())
	case msg.Method == mcp.MethodInitialized:
		l.initialized()
	case msg.Method == mcp.MethodCancelled:
		// A cancelled request is never answered.
		if id, ok := mcp.CancelledRequestID(msg.Params); ok {
			l.settle(id)
		}
	}
}

// hostState is serve's ledger: the host's requests awaiting an answer and
// its handshake, to replay on the next daemon. Safe for concurrent use.
type hostState struct {
	mu       sync.Mutex
	pending  map[string]bool
	init     []byte // the host's initialize
	initDone bool   // the host sent notifications/initialized
}

func (s *hostState) request(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]bool{}
	}
	s.pending[id] = true
}

func (s *hostState) settle(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, id)
}

func (s *hostState) initialize(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init = bytes.Clone(line)
}

func (s *hostState) initialized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initDone = true
}

// take returns the pending ids and forgets them.
func (s *hostState) take() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.pending
	s.pending = nil
	return ids
}

// replay returns the host's initialize with the id HandoffReplayID, to
// replay on a new daemon, and whether the host had sent
// notifications/initialized; nil if the host sent no initialize.
func (s *hostState) replay() (line []byte, initialized bool) {
	s.mu.Lock()
	init, initialized := s.init, s.initDone
	s.mu.Unlock()
	if init == nil {
		return nil, false
	}
	msg, err := jsonrpc.Decode(init)
	if err != nil {
		return nil, false
	}
	msg.ID = jsonrpc.IDFromRaw(apitype.HandoffReplayID)
	return msg.Encode(), initialized
}
