package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// linkTTL is how long a one-time link stays good if unused.
const linkTTL = time.Minute

// maxSessions bounds the browser sessions a view remembers; the oldest
// goes first.
const maxSessions = 32

// The view's credentials travel where no other origin can reach them. A
// cookie would not do: cookies are not bound to a port, so a page another
// local user serves on another loopback port would receive it. The link
// carries its token in the URL's fragment, which the browser never
// sends; the page trades it (once) for a session key, keeps the key in
// sessionStorage (bound to the origin, port included) and sends it in
// SessionHeader on every request, the event stream included.
const (
	// LinkHeader carries a link's token to POST /ui/session.
	LinkHeader = "Mcpx-Ui-Link"
	// SessionHeader carries the session key on every other request.
	SessionHeader = "Mcpx-Ui-Session"
)

// keys are the view's one-time link tokens and session keys.
type keys struct {
	mu       sync.Mutex
	links    map[string]time.Time // token -> expiry
	sessions []string             // session keys, oldest first
}

func randomKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// mint returns a new one-time link token.
func (k *keys) mint() string {
	tok := randomKey()
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.links == nil {
		k.links = map[string]time.Time{}
	}
	for t, exp := range k.links {
		if now.After(exp) {
			delete(k.links, t)
		}
	}
	k.links[tok] = now.Add(linkTTL)
	return tok
}

// redeem spends a link token and returns a new session key; ok is false
// for a token unknown, spent or expired.
func (k *keys) redeem(tok string) (session string, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	exp, found := k.links[tok]
	delete(k.links, tok)
	if !found || time.Now().After(exp) {
		return "", false
	}
	session = randomKey()
	if len(k.sessions) == maxSessions {
		k.sessions = k.sessions[1:]
	}
	k.sessions = append(k.sessions, session)
	return session, true
}

// valid reports whether r carries a session key of the view's in
// SessionHeader.
func (k *keys) valid(r *http.Request) bool {
	key := r.Header.Get(SessionHeader)
	if key == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	ok := false
	for _, s := range k.sessions {
		ok = subtle.ConstantTimeCompare([]byte(s), []byte(key)) == 1 || ok
	}
	return ok
}

// sameOrigin reports whether a POST (an action, or trading a link for a
// session) comes from a page of the view's own origin: browsers send
// Origin on every POST.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host)
}
