package localapi

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"mcpx/internal/apitype"
	"mcpx/internal/hoststream"
	"mcpx/internal/sock"
)

// serveStdio upgrades the connection to a raw host stream (what `mcpx serve`
// forwards) and serves MCP on it until the host leaves.
func (h *Handler) serveStdio(w http.ResponseWriter, r *http.Request) error {
	if !strings.EqualFold(r.Header.Get("Upgrade"), apitype.UpgradeProtocol) {
		return statusErr(http.StatusUpgradeRequired, errors.New("this endpoint needs Upgrade: "+apitype.UpgradeProtocol))
	}
	if h.opts.ServeHost == nil {
		return statusErr(http.StatusNotImplemented, errors.New("host streams are not served here"))
	}
	// Counted before the hijack: once hijacked, the connection is no
	// longer the server's, and Wait must not miss its goroutine.
	h.streams.Add(1)
	started := false
	defer func() {
		if !started {
			h.streams.Done()
		}
	}()
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return err
	}
	// The connection itself, for its descriptor, not the server's
	// bounding wrapper (which let go of it at the hijack).
	conn = sock.Unwrap(conn)
	// A handoff needs a unix socket, and nothing sent after the request:
	// the client sends its descriptors only once it has the 101.
	uc, isUnix := conn.(*net.UnixConn)
	handoff := r.Header.Get(apitype.HeaderHandoff) == "1" && isUnix && brw.Reader.Buffered() == 0
	head := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " +
		apitype.UpgradeProtocol + "\r\n" + apitype.HeaderVersion + ": " + h.opts.Version + "\r\n"
	if handoff {
		head += apitype.HeaderHandoff + ": 1\r\n"
	}
	_, err = brw.WriteString(head + "\r\n")
	if err == nil {
		err = brw.Flush()
	}
	if err != nil {
		conn.Close()
		return nil // the response is gone with the connection
	}
	// The session runs on a goroutine of its own, and the handler
	// returns: net/http then lets go of the connection's buffers and the
	// handler's stack, which an idle host would otherwise keep (10 KB).
	var u *upgraded
	if !handoff {
		u = newUpgraded(conn, brw.Reader)
	}
	started = true
	go h.serveStream(uc, u)
	return nil
}

// serveStream serves a host on u, or if u is nil, a host whose stdio is
// handed over on uc.
func (h *Handler) serveStream(uc *net.UnixConn, u *upgraded) {
	defer h.streams.Done()
	if u == nil {
		hoststream.ServeHandoff(uc, h.opts.ServeHost, h.log)
		return
	}
	if err := h.opts.ServeHost(u); err != nil {
		h.log.Warn("host stream ended with an error", "err", err)
	}
}

// Wait waits for the host streams the handler took over: they outlive
// the requests that upgraded them. Call it once the servers that serve
// the handler are shut down and the host sessions are told to stop.
func (h *Handler) Wait() { h.streams.Wait() }

// upgraded reads through the bufio.Reader that holds bytes the client
// sent right after its request, if it did.
type upgraded struct {
	net.Conn
	r        *bufio.Reader    // nil if it held none
	raw      io.Reader        // reads with raw system calls (see sock.RawReader); nil: through r
	writeNow func([]byte) int // nil if the connection has no descriptor
}

func (u *upgraded) Read(p []byte) (int, error) {
	if u.r != nil {
		if u.r.Buffered() > 0 {
			return u.r.Read(p)
		}
		u.r = nil // done with it
	}
	if u.raw == nil {
		return u.Conn.Read(p)
	}
	return u.raw.Read(p)
}

// WriteNow writes what the connection takes of p at once, without waiting
// (the host face writes answers with it while its writer is idle).
func (u *upgraded) WriteNow(p []byte) int {
	if u.writeNow == nil {
		return 0
	}
	return u.writeNow(p)
}

func newUpgraded(conn net.Conn, r *bufio.Reader) *upgraded {
	u := &upgraded{Conn: conn}
	if r.Buffered() > 0 { // the client sent them right after its request
		u.r = r
	}
	if c, ok := conn.(syscall.Conn); ok {
		u.writeNow = sock.NowWriter(c)
		u.raw = sock.RawReader(c)
	}
	return u
}

var _ io.ReadWriteCloser = (*upgraded)(nil)
