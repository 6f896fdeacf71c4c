package upstream

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// personAuth is an Options.Authorize that puts the person on each
// request as its bearer token ("shared" for the shared session), as
// internal/oauth's Transport puts their own token.
func personAuth(_ *config.Server, person string, base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		tok := person
		if tok == "" {
			tok = "shared"
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		return base.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A per-person server's calls go on their person's own session, with
// their own credentials and identity header: never on another's, never
// on the shared one; a call naming no person is refused; past
// MaxPersonSessions, the session unused the longest is stopped.
func TestPerPersonSessions(t *testing.T) {
	up := newScripted(t, legacyScript("2025-06-18", "sess-p", func(w http.ResponseWriter, in *inbound) {
		replyJSON(w, 200, result(in, `{"content":[{"type":"text","text":"ok"}]}`))
	}))
	srv := &config.Server{URL: up.ts.URL, OAuth: &config.OAuth{Accounts: config.AccountsPerPerson, IdentityHeader: "X-Who"}}
	p := startPool(t, srv, &Options{Authorize: personAuth})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	callAs := func(person string) *Session {
		t.Helper()
		s, err := p.SessionAs(ctx, "up", "host-1", person)
		if err != nil {
			t.Fatalf("%s's session: %v", person, err)
		}
		if _, err := call(t, s, mcp.MethodToolsCall, `{"name":"whoami","arguments":{}}`); err != nil {
			t.Fatalf("%s's call: %v", person, err)
		}
		return s
	}
	a, b := callAs("alice"), callAs("bob")
	if a == b || callAs("alice") != a {
		t.Fatal("alice and bob share a session, or alice's is not kept")
	}
	for _, in := range up.requests() {
		if in.rpcMethod() != mcp.MethodToolsCall {
			continue
		}
		auth, who := in.Header.Get("Authorization"), in.Header.Get("X-Who")
		if auth != "Bearer "+who || (who != "alice" && who != "bob") {
			t.Errorf("a call carried %q with identity %q", auth, who)
		}
	}
	if _, err := p.SessionAs(ctx, "up", "host-1", ""); !errors.Is(err, ErrNoPrincipal) {
		t.Errorf("a call naming no one: %v, want ErrNoPrincipal", err)
	}

	for i := range MaxPersonSessions {
		callAs("p" + strings.Repeat("x", i))
	}
	// The pool stops an evicted session on a goroutine of its own: wait
	// for it, within the test's bound.
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Error("alice's session, unused the longest, still runs past the bound")
	}
	p.mu.Lock()
	n := 0
	for _, h := range p.entries["up"].hosts {
		if h.person != "" {
			n++
		}
	}
	p.mu.Unlock()
	if n != MaxPersonSessions {
		t.Errorf("%d people's sessions kept, want %d", n, MaxPersonSessions)
	}
}
