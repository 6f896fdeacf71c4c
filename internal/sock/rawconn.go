package sock

import (
	"context"
	"io"
	"net"
)

// RawTCP returns c with Read and Write made by raw system calls, as
// RawReader and RawWriter make them, when c is a TCP connection with a
// non-blocking descriptor (as every one the net package makes is); else c.
// Everything else (deadlines, Close, CloseWrite, addresses) is c's own:
// a deadline ends a Read or Write that waits, and closing c ends both.
//
// A plain TCP Read or Write tells the runtime it may block, and after an
// idle moment that wakes the runtime's monitor thread, which then polls
// every 20 µs for a while: 13 % of mcpx serve --http's CPU with one call
// at a time. Errors are wrapped as the net package wraps them
// (*net.OpError, io.EOF as it is), for net/http's checks of them. Saves
// that polling (BenchmarkRelayCallUpHTTP in internal/hostserver dials the
// upstream so; the host side, in go run ./bench's serve-http paths).
func RawTCP(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, ok := nonBlocking(tc) // once for both directions
	if !ok {
		return c
	}
	return &rawTCPConn{TCPConn: tc, r: newRawReader(rc), w: newRawWriter(rc)}
}

// rawTCPConn is RawTCP's connection.
type rawTCPConn struct {
	*net.TCPConn
	r *rawReader
	w *rawWriter
}

func (c *rawTCPConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	return n, err
}

func (c *rawTCPConn) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if err != nil {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	return n, err
}

// RawTCPListener returns ln whose accepted TCP connections are RawTCP's.
func RawTCPListener(ln net.Listener) net.Listener { return rawListener{ln} }

type rawListener struct{ net.Listener }

func (l rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return RawTCP(c), nil
}

// RawTCPDial wraps dial so that the TCP connections it makes are RawTCP's
// (for an http.Transport's DialContext).
func RawTCPDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return RawTCP(c), nil
	}
}
