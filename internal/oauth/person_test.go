package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestPersonKey(t *testing.T) {
	a, b := PersonKey("gh", "http:alice#0a1b2c3d"), PersonKey("gh", "http:bob#0a1b2c3d")
	if a == b || a != PersonKey("gh", "http:alice#0a1b2c3d") || PersonKey("gh", "") != "gh" {
		t.Fatalf("keys %q %q", a, b)
	}
	if !regexp.MustCompile(`^gh~[0-9a-f]{32}$`).MatchString(a) || !isPersonKey("gh", a) || isPersonKey("g", a) || isPersonKey("gh", "gh") {
		t.Fatalf("key %q is not a file- and blob-safe per-person key of gh", a)
	}
	if k := PersonKey("gh", "sub/../../etc"); strings.ContainsAny(k, "/.") {
		t.Fatalf("an identity provider's subject reached the key: %q", k)
	}
}

// personRecord is principal's sign-in to s.
func personRecord(principal, token string) *Record {
	return &Record{Server: "s", ServerURL: "https://s/mcp", Principal: principal, Token: Token{AccessToken: token}}
}

// Each principal's record is kept apart from the shared one and the
// others', and is listed for the background refresh.
func TestPersonRecords(t *testing.T) {
	keys := mustKeys(t, testKey(1))
	for name, recs := range map[string]Records{"files": &Store{Dir: t.TempDir()}, "sealed": &Sealed{Blobs: &memBlobs{}, Keys: keys}} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			for _, r := range []*Record{personRecord("", "shared"), personRecord("alice", "a"), personRecord("bob", "b")} {
				if err := recs.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			for key, want := range map[string]string{"s": "shared", PersonKey("s", "alice"): "a", PersonKey("s", "bob"): "b"} {
				if r, err := recs.Load(ctx, key); err != nil || r.Token.AccessToken != want {
					t.Errorf("%s: %+v %v, want token %s", key, r, err, want)
				}
			}
			got, err := recs.(Lister).PersonKeys(ctx, "s")
			if err != nil || len(got) != 2 {
				t.Fatalf("listed %v %v, want alice's and bob's keys", got, err)
			}
			if err := recs.Delete(ctx, PersonKey("s", "alice")); err != nil {
				t.Fatal(err)
			}
			if _, err := recs.Load(ctx, PersonKey("s", "alice")); !errors.Is(err, ErrNoRecord) {
				t.Errorf("alice's record after its deletion: %v", err)
			}
			if r, err := recs.Load(ctx, "s"); err != nil || r.Token.AccessToken != "shared" {
				t.Errorf("the shared record after alice's deletion: %+v %v", r, err)
			}
		})
	}
}

// A sealed record opens only under its own key: one principal's blob
// copied under another's name in the store is no sign-in of theirs.
func TestSealedPersonBinding(t *testing.T) {
	blobs := &memBlobs{}
	recs := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1))}
	if err := recs.Save(t.Context(), personRecord("alice", "a")); err != nil {
		t.Fatal(err)
	}
	blob, _ := blobs.Blob(t.Context(), blobName(PersonKey("s", "alice")))
	_ = blobs.PutBlob(t.Context(), blobName(PersonKey("s", "mallory")), blob)
	if r, err := recs.Load(t.Context(), PersonKey("s", "mallory")); err == nil {
		t.Fatalf("alice's sealed sign-in opened as mallory's: %+v", r)
	}
}

// The refresher keeps each principal's token fresh, not only the shared
// one's.
func TestRefresherPerPerson(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := &Store{Dir: t.TempDir()}
		now := time.Now()
		for _, p := range []string{"alice", "bob"} {
			rec := &Record{Server: "s", ServerURL: "https://s/mcp", Resource: "https://s/mcp", Principal: p,
				Metadata: ServerMetadata{TokenEndpoint: "https://as/token"}, Client: Registration{ClientID: "c"},
				Token: Token{AccessToken: "at-" + p, RefreshToken: "rt-" + p, Obtained: now.Add(-time.Hour), Expiry: now.Add(time.Minute)}}
			if err := recs.Save(t.Context(), rec); err != nil {
				t.Fatal(err)
			}
		}
		te := &tokenEndpoint{lifetime: 3600}
		ctx, cancel := context.WithCancel(t.Context())
		r := &Refresher{Records: recs, HTTP: &http.Client{Transport: te},
			Targets: func() []Target { return []Target{{Server: "s", URL: "https://s/mcp", PerPerson: true}} }}
		var wg sync.WaitGroup
		wg.Go(func() { _ = r.Run(ctx) })
		synctest.Wait()
		cancel()
		wg.Wait()
		if n := te.count(); n != 2 {
			t.Fatalf("%d refresh grants, want one for each person", n)
		}
		for _, p := range []string{"alice", "bob"} {
			rec, err := recs.Load(t.Context(), PersonKey("s", p))
			if err != nil || rec.Principal != p || !strings.HasPrefix(rec.Token.AccessToken, "at-") || rec.Token.AccessToken == "at-"+p {
				t.Errorf("%s's record after the refresh: %+v %v", p, rec, err)
			}
		}
	})
}

// The sign-in pages: the start works once; the callback only with the
// start's cookie, once, and not after the sign-in expired.
func TestGatewayPages(t *testing.T) {
	g := &Gateway{Records: &Store{Dir: t.TempDir()}, Pending: &MemBlobs{}, BaseURL: func() string { return "http://gw" }}
	put := func(state string, p pending) {
		blob, err := g.encode(state, &p)
		if err != nil {
			t.Fatal(err)
		}
		_ = g.Pending.PutBlob(t.Context(), pendingName(state), blob)
	}
	base := pending{Server: "s", Principal: "alice", AuthURL: "https://as/authorize?x=1", Binding: "bind", Redirect: "http://gw" + CallbackPath,
		Expires: time.Now().Add(time.Minute), Metadata: ServerMetadata{Issuer: "https://as"}}
	put("st1", base)
	if who, server, err := g.Bound(t.Context(), "st1"); err != nil || who != "alice" || server != "s" {
		t.Fatalf("Bound: %q %q %v", who, server, err)
	}
	page := func(fn func(http.ResponseWriter, *http.Request) error, target string, cookie *http.Cookie) (int, *httptest.ResponseRecorder) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if cookie != nil {
			r.AddCookie(cookie)
		}
		err := fn(w, r)
		var pe *PageError
		if errors.As(err, &pe) {
			return pe.Status, w
		}
		if err != nil {
			t.Fatal(err)
		}
		return w.Code, w
	}
	// The callback before the start, or without its cookie: refused.
	if code, _ := page(g.Callback, CallbackPath+"?state=st1&code=c", &http.Cookie{Name: cookieName, Value: "bind"}); code != http.StatusForbidden {
		t.Errorf("the callback before the start: %d, want 403", code)
	}
	code, w := page(g.Start, StartPath+"?s=st1", nil)
	if code != http.StatusSeeOther || w.Header().Get("Location") != base.AuthURL {
		t.Fatalf("the start: %d to %q", code, w.Header().Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != "bind" || !cookie.HttpOnly || cookie.Path != CallbackPath {
		t.Fatalf("the start's cookie: %+v", cookie)
	}
	if code, _ := page(g.Start, StartPath+"?s=st1", nil); code != http.StatusGone {
		t.Errorf("the start opened again: %d, want 410", code)
	}
	for name, c := range map[string]*http.Cookie{"no cookie": nil, "another's": {Name: cookieName, Value: "other"}} {
		if code, _ := page(g.Callback, CallbackPath+"?state=st1&code=c", c); code != http.StatusForbidden {
			t.Errorf("the callback with %s: %d, want 403", name, code)
		}
	}
	// With the cookie, the response is taken (and, its iss being wrong,
	// discarded): the state is spent.
	if code, _ := page(g.Callback, CallbackPath+"?state=st1&code=c&iss=https://evil", cookie); code != http.StatusBadRequest {
		t.Errorf("the callback naming another issuer: %d, want 400", code)
	}
	if code, _ := page(g.Callback, CallbackPath+"?state=st1&code=c", cookie); code != http.StatusNotFound {
		t.Errorf("the callback again: %d, want 404", code)
	}
	expired := base
	expired.Expires, expired.Started = time.Now().Add(-time.Second), true
	put("st2", expired)
	if code, _ := page(g.Callback, CallbackPath+"?state=st2&code=c", cookie); code != http.StatusGone {
		t.Errorf("the callback of an expired sign-in: %d, want 410", code)
	}
	if code, _ := page(g.Start, StartPath+"?s=unknown", nil); code != http.StatusNotFound {
		t.Errorf("an unknown state: %d, want 404", code)
	}
}
