package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// callback is the loopback listener the authorization server redirects
// the user agent to. It serves the sign-in's start too, and takes a
// redirect only from the browser that started it (see serve).
type callback struct {
	ln          net.Listener
	redirectURI string
	path        string
	srv         *http.Server
	wg          sync.WaitGroup
	// startURL is what the user opens: its key works once, and sends
	// the browser to authURL with a cookie that binds the redirect to it.
	startURL string
	startKey string
	binding  string // the cookie's value
	cookie   string // the cookie's name, with the port: cookies are not port-bound
	authURL  atomic.Pointer[string]
	started  atomic.Bool
	answered atomic.Bool // a redirect was taken: any other is refused
	got      chan url.Values
	// outcome carries what the browser is told once the sign-in is over
	// (the code exchanged and the tokens stored, or not): the redirect's
	// answer waits for it, so that a host that retries once its user's
	// browser shows the page finds the sign-in stored.
	outcome chan string
}

// listen opens the redirect listener: on fixed, which must be an http URL
// on a loopback host (the spec allows only localhost or https redirect
// URIs, and mcpx receives the code itself, so loopback only), else on a
// free port of 127.0.0.1.
func listen(fixed string) (*callback, error) {
	addr, path := "127.0.0.1:0", "/callback"
	if fixed != "" {
		u, err := url.Parse(fixed)
		if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) || u.Port() == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("the redirect URI %q is not an http URL on a loopback address with a port (mcpx receives the redirect itself, so only 127.0.0.1, ::1 or localhost will do)", fixed)
		}
		addr, path = net.JoinHostPort(u.Hostname(), u.Port()), u.EscapedPath()
		if path == "" {
			path = "/"
		}
		if path == startPath {
			return nil, fmt.Errorf("the redirect URI %q takes the path of mcpx's sign-in start, %s: choose another", fixed, startPath)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in redirect: %w", err)
	}
	cb := &callback{ln: ln, path: path, got: make(chan url.Values, 1), outcome: make(chan string, 1),
		startKey: randomString(), binding: randomString()}
	if fixed != "" {
		cb.redirectURI = fixed
	} else {
		cb.redirectURI = "http://" + ln.Addr().String() + path
	}
	ru, _ := url.Parse(cb.redirectURI)
	cb.cookie = "mcpx_signin_" + ru.Port()
	cb.startURL = (&url.URL{Scheme: "http", Host: ru.Host, Path: startPath, RawQuery: "k=" + cb.startKey}).String()
	cb.srv = &http.Server{Handler: http.HandlerFunc(cb.route), ReadHeaderTimeout: 10 * time.Second}
	cb.wg.Add(1)
	go func() {
		defer cb.wg.Done()
		_ = cb.srv.Serve(ln)
	}()
	return cb, nil
}

// startPath is the start's path on the redirect listener.
const startPath = "/mcpx-sign-in"

func (cb *callback) route(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.URL.Path {
	case cb.path:
		cb.serve(w, r)
	case startPath:
		cb.start(w, r)
	default:
		http.NotFound(w, r)
	}
}

// start is the sign-in's first page: with the start key, once, it sets
// the binding cookie and sends the browser to the authorization URL.
func (cb *callback) start(w http.ResponseWriter, r *http.Request) {
	au := cb.authURL.Load()
	if r.Method != http.MethodGet || au == nil || !equalSecret(r.URL.Query().Get("k"), cb.startKey) {
		http.Error(w, "not this sign-in's start", http.StatusForbidden)
		return
	}
	if !cb.started.CompareAndSwap(false, true) {
		http.Error(w, "this sign-in was started already: run mcpx login again for a new one", http.StatusGone)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cb.cookie, Value: cb.binding, Path: cb.path, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, *au, http.StatusSeeOther)
}

// serve takes the authorization server's redirect. Only the first one
// that comes from the browser that opened the start is taken: a redirect
// before the start was opened, or without its cookie, is refused (403)
// and the sign-in waits on (another local user who learnt the state
// cannot sign mcpx in to an account of theirs); once one is taken, any
// other is refused (409).
func (cb *callback) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code") == "" && q.Get("error") == "" {
		http.Error(w, "not an authorization response", http.StatusBadRequest)
		return
	}
	c, err := r.Cookie(cb.cookie)
	if !cb.started.Load() || err != nil || !equalSecret(c.Value, cb.binding) {
		http.Error(w, "refused: this sign-in response does not come from the browser that started the sign-in", http.StatusForbidden)
		return
	}
	if !cb.answered.CompareAndSwap(false, true) {
		http.Error(w, "a sign-in response already arrived", http.StatusConflict)
		return
	}
	cb.got <- q
	msg := "mcpx received the sign-in response, but took too long to finish the sign-in; see mcpx's output."
	t := time.NewTimer(outcomeWait)
	defer t.Stop()
	select {
	case msg = <-cb.outcome:
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, msg+"\n")
}

// outcomeWait bounds how long the redirect's answer waits for the token
// exchange.
const outcomeWait = 30 * time.Second

// finish tells the browser how the sign-in ended.
func (cb *callback) finish(err error) {
	msg := "mcpx received the sign-in response and is signed in. You can close this window."
	if err != nil {
		msg = "mcpx could not complete the sign-in: " + err.Error()
	}
	select {
	case cb.outcome <- msg:
	default:
	}
}

func (cb *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if cb.srv.Shutdown(ctx) != nil {
		_ = cb.srv.Close()
	}
	cb.wg.Wait()
}

// await shows the start of a sign-in at authURL with browser and waits
// for the redirect, then checks it: the state must be the one sent (else
// the response is discarded), and the iss parameter must be the issuer as RFC 9207 §2.4
// and the 2026-07-28 spec's table say, before the code goes anywhere.
// stop, always to be called once the browser has been told the outcome
// (finish), ends the browser's part and waits for it.
func (cb *callback) await(ctx context.Context, authURL string, browser Browser, state string, md *ServerMetadata) (code string, stop func(), err error) {
	bctx, cancel := context.WithCancel(ctx)
	berr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	cb.authURL.Store(&authURL)
	go func() {
		defer wg.Done()
		berr <- browser(bctx, cb.startURL)
	}()
	stop = func() {
		cancel()
		wg.Wait()
	}
	var q url.Values
	for q == nil {
		select {
		case q = <-cb.got:
		case err := <-berr:
			if err != nil {
				return "", stop, fmt.Errorf("showing the authorization URL: %w", err)
			}
			berr = nil // shown; keep waiting for the redirect
		case <-ctx.Done():
			return "", stop, fmt.Errorf("waiting for the sign-in redirect: %w", context.Cause(ctx))
		}
	}
	code, err = checkResponse(q, state, md)
	return code, stop, err
}

// ErrStateMismatch: the redirect's state is not the one mcpx sent.
var ErrStateMismatch = errors.New("the sign-in redirect's state does not match the one mcpx sent: the response was discarded (a forged or stale redirect)")

func checkResponse(q url.Values, state string, md *ServerMetadata) (string, error) {
	if !equalSecret(q.Get("state"), state) {
		return "", ErrStateMismatch
	}
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != md.Issuer):
		return "", fmt.Errorf("the sign-in redirect names issuer %q, not %q (RFC 9207: a mix-up); the response was discarded", q.Get("iss"), md.Issuer)
	case !hasIss && md.IssParameterSupported:
		return "", fmt.Errorf("the sign-in redirect has no iss although %s says it sends one (RFC 9207); the response was discarded", md.Issuer)
	}
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("the authorization server refused the sign-in: %s %s", e, q.Get("error_description"))
	}
	return q.Get("code"), nil
}

// limitedClient is the client with every response body bounded: a larger
// one fails with a *TooLargeError (x/oauth2 would cut it silently).
func (c *Client) limitedClient() *http.Client {
	hc := *c.httpClient()
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = limitTransport{base: base, limit: c.maxBody()}
	return &hc
}

type limitTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitBody{rc: resp.Body, left: t.limit, limit: t.limit, what: req.URL.Redacted()}
	return resp, nil
}

type limitBody struct {
	rc          io.ReadCloser
	left, limit int64
	what        string
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, &TooLargeError{What: b.what, Limit: b.limit}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
