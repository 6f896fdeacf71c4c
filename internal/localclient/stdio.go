package localclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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
	s, _, err := c.dialHost(ctx, nil, nil)
	return s, err
}

// HandOff offers the host's stdio to the daemon: in and out are the host's
// pipes (its output, read; its input, written) and table a handoff table
// file (package hoststream), and start what serve had of the host's stream
// (nil the first time). If the daemon takes them it serves the host on
// them itself, and the returned Handoff carries its events; if it does
// not (an older daemon), the returned HostStream forwards as DialHost's
// does. The caller keeps its own descriptors either way.
func (c *Client) HandOff(ctx context.Context, in, out, table int, start *apitype.HandoffStart) (*Handoff, *HostStream, error) {
	if start == nil {
		start = &apitype.HandoffStart{}
	}
	s, h, err := c.dialHost(ctx, []int{in, out, table}, start)
	return h, s, err
}

func (c *Client) dialHost(ctx context.Context, fds []int, start *apitype.HandoffStart) (*HostStream, *Handoff, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, nil, fmt.Errorf("connecting to the daemon: not a unix socket")
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = uc.SetDeadline(dl)
	} else {
		_ = uc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req, err := c.newRequest(ctx, http.MethodGet, apitype.PathStdio, nil)
	if err != nil {
		uc.Close()
		return nil, nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", apitype.UpgradeProtocol)
	if fds != nil {
		req.Header.Set(apitype.HeaderHandoff, "1")
	}
	if err := req.Write(uc); err != nil {
		uc.Close()
		return nil, nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	br := bufio.NewReader(uc)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		uc.Close()
		return nil, nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer uc.Close()
		if err := checkStatus(resp); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("connecting to the daemon: got %s, want 101", resp.Status)
	}
	if fds != nil && resp.Header.Get(apitype.HeaderHandoff) == "1" {
		if err := sock.SendFiles(uc, fds...); err != nil {
			uc.Close()
			return nil, nil, fmt.Errorf("handing the host to the daemon: %w", err)
		}
		b, err := json.Marshal(start)
		if err == nil {
			_, err = uc.Write(append(b, '\n'))
		}
		if err != nil {
			uc.Close()
			return nil, nil, fmt.Errorf("handing the host to the daemon: %w", err)
		}
		_ = uc.SetDeadline(time.Time{})
		return nil, &Handoff{conn: uc, r: br}, nil
	}
	_ = uc.SetDeadline(time.Time{})
	return &HostStream{conn: uc, r: br, rawR: sock.RawReader(uc), rawW: sock.RawWriter(uc)}, nil, nil
}

// Handoff is a host's stdio handed to the daemon (see Client.HandOff). Its
// methods are for one goroutine, but Close may be called at any time.
type Handoff struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// Next returns the daemon's next event. An error means the daemon closed
// the socket or died, and will not serve the host any longer: the caller
// takes the host back.
func (h *Handoff) Next() (*apitype.HandoffEvent, error) {
	line, err := h.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		var long []byte
		for errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			line, err = h.r.ReadSlice('\n')
		}
		line = append(long, line...)
	}
	if err != nil {
		return nil, err
	}
	ev := new(apitype.HandoffEvent)
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, fmt.Errorf("reading the daemon's handoff events: %w", err)
	}
	return ev, nil
}

// Close ends the handoff: the daemon ends the host's session (its calls
// are cancelled) and stops using the host's stdio.
func (h *Handoff) Close() error { return h.conn.Close() }
