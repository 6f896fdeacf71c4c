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

const cookieName = "mcpx_ui"

// keys are the view's one-time link tokens and session cookies.
type keys struct {
	mu       sync.Mutex
	links    map[string]time.Time // token -> expiry
	sessions []string             // cookie values, oldest first
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

// valid reports whether r carries a session cookie of the view's.
func (k *keys) valid(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	ok := false
	for _, s := range k.sessions {
		ok = subtle.ConstantTimeCompare([]byte(s), []byte(c.Value)) == 1 || ok
	}
	return ok
}

// sameOrigin reports whether a request that changes something comes from
// a page of the view's own origin: browsers send Origin on every POST.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host)
}
