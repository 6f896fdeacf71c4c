package localclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/sock"
)

// HostStream is a host's MCP stream to the daemon, after the upgrade.
type HostStream struct {
	conn *net.UnixConn
	r    *bufio.Reader // what came with the daemon's answer to the upgrade, first
	// raw reads and writes the socket with raw system calls (see
	// sock.RawReader); nil: through conn.
	rawR io.Reader
	rawW io.Writer
}

func (s *HostStream) Read(p []byte) (int, error) {
	if s.rawR == nil || s.r.Buffered() > 0 {
		return s.r.Read(p)
	}
	return s.rawR.Read(p)
}

func (s *HostStream) Write(p []byte) (int, error) {
	if s.rawW == nil {
		return s.conn.Write(p)
	}
	return s.rawW.Write(p)
}

// CloseWrite tells the daemon the host has nothing more to send: it ends
// the host's session.
func (s *HostStream) CloseWrite() error { return s.conn.CloseWrite() }

// Close closes the stream.
func (s *HostStream) Close() error { return s.conn.Close() }

// DialHost opens a host stream: the daemon serves MCP on it as if the host
// were connected to it directly.
func (c *Client) DialHost(ctx context.Context) (*HostStream, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("connecting to the daemon: not a unix socket")
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = uc.SetDeadline(dl)
	} else {
		_ = uc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req, err := c.newRequest(ctx, http.MethodGet, apitype.PathStdio, nil)
	if err != nil {
		uc.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", apitype.UpgradeProtocol)
	if err := req.Write(uc); err != nil {
		uc.Close()
		return nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	br := bufio.NewReader(uc)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer uc.Close()
		if err := checkStatus(resp); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("connecting to the daemon: got %s, want 101", resp.Status)
	}
	_ = uc.SetDeadline(time.Time{})
	return &HostStream{conn: uc, r: br, rawR: sock.RawReader(uc), rawW: sock.RawWriter(uc)}, nil
}
