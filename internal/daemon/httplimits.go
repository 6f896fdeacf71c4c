package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"mcpx/internal/sock"
)

// Bounds of the HTTP servers (both MCP faces and the local API): what a
// client that never authenticates, or never finishes, may hold.
const (
	// readHeaderTimeout bounds a request's line and headers.
	readHeaderTimeout = 10 * time.Second
	// bodyReadTimeout bounds reading a request's body (16 MiB at most):
	// a body dripped a byte a second ends with the connection.
	bodyReadTimeout = 30 * time.Second
	// idleConnTimeout closes a keep-alive connection with no request.
	idleConnTimeout = 2 * time.Minute
	// maxConns bounds connections at once; connections that have not yet
	// made a trusted request have a budget of a quarter of it.
	maxConns = 1024
)

// connRefusal is what a connection past the bounds is told.
var connRefusal = func() []byte {
	const body = "mcpx: too many connections open at once; close some and try again.\n"
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

// newConnGuard returns the connection bounds of one server: at most
// maxConns, and no more than half the descriptors this process may open;
// with trust, a budget of a quarter of that for connections not yet
// trusted, the oldest of which makes way for a new connection
// (hostserver trusts a connection once a request on it passes its
// checks). The local API's peers are checked when accepted: it needs no
// second bound.
func newConnGuard(trust bool) *sock.ConnGuard {
	n := maxConns
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur/2 < uint64(n) {
		n = max(int(lim.Cur/2), 8)
	}
	g := &sock.ConnGuard{Max: n, Refusal: connRefusal}
	if trust {
		g.MaxUntrusted = max(n/4, 2)
	}
	return g
}

// httpServer returns a server for h whose own errors go to log, and whose
// connections g bounds: serve it on g.Listener(ln). It sets no write
// timeout (response streams last as long as their calls), and no overall
// read timeout (net/http would end a stream's context with it): a body
// has bodyReadTimeout, an idle connection idleConnTimeout.
func httpServer(h http.Handler, log *slog.Logger, g *sock.ConnGuard) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, bodyReadTimeout),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleConnTimeout,
		ConnContext:       g.ConnContext,
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateHijacked {
				g.Hijacked(c)
			}
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// bodyDeadline gives a request with a body timeout to send it.
// The deadline is lifted when the body ends, before the handler's stream
// begins; a handler that never reads the body leaves it in place for
// net/http's own draining of it.
func bodyDeadline(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body ends. A handler
// reads its body from one goroutine.
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	ended bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.ended {
		b.ended = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
