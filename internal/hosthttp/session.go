package hosthttp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"mcpx/internal/principal"
)

// httpSession is one legacy (initialize-based) host session over HTTP: a
// host session without a stream of its own, whose requests arrive as
// POSTs carrying its id. The id is a secret of the host's (it is all a
// request needs to act in the session), so logs and the registry name the
// session by its host session's label instead.
type httpSession struct {
	id  string // Mcp-Session-Id: 128 random bits, hex
	hs  Session
	who principal.Principal // whose session it is

	// Guarded by Server.mu.
	stream   *Stream   // the standalone GET stream, if one is open
	active   int       // requests in flight, the GET stream included
	lastUsed time.Time // when the last one ended
	ended    bool
}

// errTooManySessions refuses a session past MaxSessions when every one
// has something in flight.
var errTooManySessions = errors.New("too many HTTP sessions with calls in flight; end one (DELETE) or try again later")

// addSession makes hs (just initialized) a legacy session with a fresh id,
// ending first the sessions idle for longer than SessionIdle and, at
// MaxSessions, the one unused for the longest.
func (h *Server) addSession(hs Session, who principal.Principal) (*httpSession, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("making a session id: %w", err)
	}
	sess := &httpSession{id: hex.EncodeToString(b), hs: hs, who: who, lastUsed: time.Now()}
	var idle []*httpSession
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, fmt.Errorf("mcpx is stopping")
	}
	var oldest *httpSession // unused for the longest, nothing in flight
	for _, s := range h.sessions {
		if s.active == 0 && time.Since(s.lastUsed) > h.opts.SessionIdle {
			idle = append(idle, s)
		} else if s.active == 0 && (oldest == nil || s.lastUsed.Before(oldest.lastUsed)) {
			oldest = s
		}
	}
	if len(h.sessions)-len(idle) >= h.opts.MaxSessions {
		if oldest == nil {
			h.mu.Unlock()
			return nil, errTooManySessions
		}
		idle = append(idle, oldest)
		delete(h.sessions, oldest.id) // ended below; its place is the new one's
	}
	h.sessions[sess.id] = sess
	h.mu.Unlock()
	for _, s := range idle {
		h.endSession(s, EndIdle)
	}
	p, version, client := hs.Describe()
	h.log.Info("http session started", "host", hs.ID(), "principal", p, "version", version, "client", client)
	return sess, nil
}

// session returns the live session with id sid of principal, or nil.
// A session is bound to the principal that started it: to any other, its
// id names no session (404, as for an ended one), so that a host holding
// another token can neither act in it nor learn that it exists. The
// spec's security guidance asks for this binding of session ids to the
// user (a session id is then looked up under its user). A person's
// session is bound to their groups as they were when it began too: a
// token that says other groups (they joined or left one) finds no
// session, and its host starts another, under the policy of the groups
// it now has.
func (h *Server) session(who principal.Principal, sid string) *httpSession {
	h.mu.Lock()
	sess := h.sessions[sid]
	h.mu.Unlock()
	if sess == nil || sess.who.ID() != who.ID() || !slices.Equal(sess.who.Groups(), who.Groups()) {
		return nil
	}
	return sess
}

// enter counts a request in flight in sess; false if it has ended.
func (h *Server) enter(sess *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sess.ended || h.closed {
		return false
	}
	sess.active++
	return true
}

func (h *Server) leave(sess *httpSession) {
	h.mu.Lock()
	sess.active--
	sess.lastUsed = time.Now()
	h.mu.Unlock()
}

// endSession ends sess: later requests naming it get 404, and its calls in
// flight are cancelled, for why.
func (h *Server) endSession(sess *httpSession, why Ending) {
	h.mu.Lock()
	if sess.ended {
		h.mu.Unlock()
		return
	}
	sess.ended = true
	delete(h.sessions, sess.id)
	delete(h.live, sess.hs)
	stream := sess.stream
	// Counted under h.mu, so that Close (which sets closed under it and
	// then waits for the count) never sees an Add after its Wait began.
	closed := h.closed
	if !closed {
		h.cleanup.Add(1)
	}
	h.mu.Unlock()
	if stream != nil {
		stream.finish()
	}
	n, cause := sess.hs.End(why)
	// What it asked for no longer counts: its log level, its resource
	// subscriptions (unsubscribed upstream when it was the last, which may
	// take an upstream round trip: not on the caller's time, which may be
	// another host's initialize), and its own sessions of perHost servers,
	// once its requests, cancelled above, have ended (none starts another).
	cleanup := func() {
		sess.hs.Close()
		sess.hs.Leave()
	}
	if closed {
		cleanup() // Close is under way: on the caller's time
	} else {
		go func() {
			defer h.cleanup.Done()
			cleanup()
		}()
	}
	p, _, _ := sess.hs.Describe()
	h.log.Info("http session ended", "host", sess.hs.ID(), "principal", p, "why", cause.Error(), "cancelledCalls", n)
}
