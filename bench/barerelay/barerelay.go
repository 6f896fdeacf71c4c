// Package barerelay is the floor of one stdio hop: a relay that decodes
// each JSON-RPC message and rewrites request ids, and does nothing else. It
// sits between a host (on one stream pair) and an upstream (on another)
// and is what mcpx's stdio face is judged against: mcpx does everything
// this does, plus routing, progress tokens, timers and cancellation
// reasons.
//
// Host requests get fresh upstream ids (so that several hosts could share
// one upstream without clashing); each response gets the host's id back.
// A host's notifications/cancelled has its requestId mapped the same way,
// or the upstream would never recognise it. Progress tokens, notifications
// and server-to-client requests pass through as they are.
package barerelay

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// message is a JSON-RPC message decoded to its envelope.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// Relay copies messages between a host and an upstream until either
// stream ends.
type Relay struct {
	mu     sync.Mutex
	next   int64
	byUp   map[int64]json.RawMessage // upstream id -> host id
	byHost map[string]int64          // host id -> upstream id, for cancels
}

// Run relays between host (hostIn, hostOut) and upstream (upIn, upOut)
// and returns when either input ends.
func Run(hostIn io.Reader, hostOut io.Writer, upIn io.Reader, upOut io.Writer) error {
	r := &Relay{byUp: map[int64]json.RawMessage{}, byHost: map[string]int64{}}
	errc := make(chan error, 2)
	go func() { errc <- pump(hostIn, upOut, r.fromHost) }()
	go func() { errc <- pump(upIn, hostOut, r.fromUpstream) }()
	return <-errc
}

// pump reads lines from in, passes each decoded message through edit and
// writes it, re-encoded, to out.
func pump(in io.Reader, out io.Writer, edit func(*message)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue // not a message: dropped
		}
		edit(&m)
		b, err := json.Marshal(&m)
		if err != nil {
			return err
		}
		w.Write(append(b, '\n'))
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// fromHost gives a request a fresh id, and maps a cancellation's requestId.
func (r *Relay) fromHost(m *message) {
	switch {
	case m.Method != "" && m.ID != nil:
		r.mu.Lock()
		r.next++
		r.byUp[r.next] = m.ID
		r.byHost[string(m.ID)] = r.next
		m.ID = json.RawMessage(strconv.FormatInt(r.next, 10))
		r.mu.Unlock()
	case m.Method == "notifications/cancelled":
		var p map[string]json.RawMessage
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		r.mu.Lock()
		up, ok := r.byHost[string(p["requestId"])]
		r.mu.Unlock()
		if ok {
			p["requestId"] = json.RawMessage(strconv.FormatInt(up, 10))
			m.Params, _ = json.Marshal(p)
		}
	}
}

// fromUpstream gives a response its host's id back.
func (r *Relay) fromUpstream(m *message) {
	if m.Method != "" || m.ID == nil {
		return
	}
	up, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	if host, ok := r.byUp[up]; ok {
		delete(r.byUp, up)
		delete(r.byHost, string(host))
		m.ID = host
	}
	r.mu.Unlock()
}
