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
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return err
	}
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
	if handoff {
		h.serveHandoff(uc)
		return nil
	}
	u := &upgraded{Conn: conn, r: brw.Reader}
	if c, ok := conn.(syscall.Conn); ok {
		u.writeNow = sock.NowWriter(c)
		u.raw = sock.RawReader(c)
	}
	if err := h.opts.ServeHost(u); err != nil {
		h.log.Warn("host stream ended with an error", "err", err)
	}
	return nil
}

// upgraded reads through the bufio.Reader that may hold bytes the client
// sent right after its request.
type upgraded struct {
	net.Conn
	r        *bufio.Reader
	raw      io.Reader        // reads with raw system calls (see sock.RawReader); nil: through r
	writeNow func([]byte) int // nil if the connection has no descriptor
}

func (u *upgraded) Read(p []byte) (int, error) {
	if u.raw == nil || u.r.Buffered() > 0 {
		return u.r.Read(p)
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

var _ io.ReadWriteCloser = (*upgraded)(nil)
