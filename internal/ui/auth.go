package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"mcpx/internal/principal"
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

// keys are the view's one-time link tokens and session keys, each of
// the principal the link was minted for: a session acts for whoever
// asked for its link.
type keys struct {
	mu       sync.Mutex
	links    map[string]link // by token
	sessions []session       // oldest first
}

type link struct {
	expiry time.Time
	who    principal.Principal
}

type session struct {
	key string
	who principal.Principal
}

func randomKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// mint returns a new one-time link token for who.
func (k *keys) mint(who principal.Principal) string {
	tok := randomKey()
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.links == nil {
		k.links = map[string]link{}
	}
	for t, l := range k.links {
		if now.After(l.expiry) {
			delete(k.links, t)
		}
	}
	k.links[tok] = link{expiry: now.Add(linkTTL), who: who}
	return tok
}

// redeem spends a link token; ok is false for a token unknown, spent or
// expired. The caller decides whether who may open a session (open).
func (k *keys) redeem(tok string) (who principal.Principal, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, found := k.links[tok]
	delete(k.links, tok)
	if !found || time.Now().After(l.expiry) {
		return principal.Principal{}, false
	}
	return l.who, true
}

// open returns a new session key for who.
func (k *keys) open(who principal.Principal) string {
	key := randomKey()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.sessions) == maxSessions {
		k.sessions = k.sessions[1:]
	}
	k.sessions = append(k.sessions, session{key: key, who: who})
	return key
}

// sessionOf returns the principal of the session whose key r carries in
// SessionHeader; ok is false for none.
func (k *keys) sessionOf(r *http.Request) (who principal.Principal, ok bool) {
	key := r.Header.Get(SessionHeader)
	if key == "" {
		return principal.Principal{}, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.sessions {
		if subtle.ConstantTimeCompare([]byte(s.key), []byte(key)) == 1 {
			who, ok = s.who, true
		}
	}
	return who, ok
}

// sameOrigin reports whether a POST (an action, or trading a link for a
// session) comes from a page of the view's own origin: browsers send
// Origin on every POST.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host)
}
