package ui

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/principal"
)

func withSession(v string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/ui/state", nil)
	if v != "" {
		r.Header.Set(SessionHeader, v)
	}
	return r
}

func (k *keys) valid(r *http.Request) bool {
	_, ok := k.sessionOf(r)
	return ok
}

// trade redeems tok and opens a session for the link's principal, as
// the view does once the policy allows it.
func (k *keys) trade(tok string) (string, bool) {
	who, ok := k.redeem(tok)
	if !ok {
		return "", false
	}
	return k.open(who), true
}

// A link works once; its session key then opens the view, for the
// principal the link was minted for, and nothing else does.
func TestLinkOnce(t *testing.T) {
	var k keys
	tok := k.mint(principal.DefaultToken())
	s, ok := k.trade(tok)
	if !ok || s == "" {
		t.Fatalf("a fresh link was refused")
	}
	if who, _ := k.sessionOf(withSession(s)); who != principal.DefaultToken() {
		t.Errorf("the session acts for %v, want the link's principal %v", who, principal.DefaultToken())
	}
	if _, ok := k.trade(tok); ok {
		t.Errorf("a link worked twice")
	}
	if _, ok := k.redeem("made-up"); ok {
		t.Errorf("an unknown token worked")
	}
	if !k.valid(withSession(s)) {
		t.Errorf("the session key is not valid")
	}
	for _, v := range []string{"", "x", s + "x", tok} {
		if k.valid(withSession(v)) {
			t.Errorf("session key %q is valid", v)
		}
	}
}

// A link expires after linkTTL unused.
func TestLinkExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k keys
		early, late := k.mint(principal.LocalUser()), k.mint(principal.LocalUser())
		time.Sleep(linkTTL - time.Second)
		if _, ok := k.redeem(early); !ok {
			t.Errorf("a link was refused before its time")
		}
		time.Sleep(2 * time.Second)
		if _, ok := k.redeem(late); ok {
			t.Errorf("a link worked after %s", linkTTL)
		}
	})
}

// Only the newest maxSessions sessions stay valid.
func TestSessionsBounded(t *testing.T) {
	var k keys
	var first string
	for i := range maxSessions + 1 {
		s, _ := k.trade(k.mint(principal.LocalUser()))
		if i == 0 {
			first = s
		}
	}
	if k.valid(withSession(first)) {
		t.Errorf("the oldest of %d sessions is still valid", maxSessions+1)
	}
	if len(k.sessions) != maxSessions {
		t.Errorf("%d sessions kept, want %d", len(k.sessions), maxSessions)
	}
}

func TestSameOrigin(t *testing.T) {
	for origin, want := range map[string]bool{"": false, "http://127.0.0.1:9": true, "http://localhost:9": false, "https://127.0.0.1:9": false, "null": false} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/ui/x", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if got := sameOrigin(r); got != want {
			t.Errorf("Origin %q: %v, want %v", origin, got, want)
		}
	}
}
