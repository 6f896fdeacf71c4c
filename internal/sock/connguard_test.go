package sock

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestConnGuard: past MaxUntrusted connections not yet trusted, a new one
// takes the place of the oldest untrusted one, which is closed; trusting
// one frees its place; past Max a new one takes an untrusted one's place,
// and with none to take is refused with the refusal, readable by a peer
// that sent a request; closing one gives its place back.
func TestConnGuard(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &ConnGuard{Max: 2, MaxUntrusted: 1, Refusal: []byte("refused\n")}
	gl := g.Listener(ln)
	accepted := make(chan net.Conn, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := gl.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		gl.Close()
		<-done
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	admitted := func() net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("a connection within the bounds was not accepted")
			return nil
		}
	}
	refused := func(c net.Conn) {
		t.Helper()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // unread by the server
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(c)
		if string(b) != "refused\n" {
			t.Fatalf("a connection past the bounds read %q, %v; want the refusal", b, err)
		}
	}

	admit := func() net.Conn {
		t.Helper()
		dial()
		return admitted()
	}
	counts := func(wantLive, wantUntrusted int) {
		t.Helper()
		if live, untrusted := g.Counts(); live != wantLive || untrusted != wantUntrusted {
			t.Fatalf("counts %d live, %d untrusted; want %d, %d", live, untrusted, wantLive, wantUntrusted)
		}
	}
	// closedByServer waits for the server to close the peer of c.
	closedByServer := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
			t.Fatalf("%s: read %q, %v; want it closed", what, b, err)
		}
	}
	firstPeer := dial()
	admitted()
	dial()
	second := admitted() // past MaxUntrusted: the first makes way
	closedByServer(firstPeer, "the oldest untrusted connection, after a new one")
	counts(1, 1)
	Trust(g.ConnContext(context.Background(), second))
	thirdPeer := dial()
	admitted()
	counts(2, 1)
	dial()
	fourth := admitted() // past Max: the untrusted third makes way
	closedByServer(thirdPeer, "the untrusted connection, past Max")
	counts(2, 1)
	Trust(g.ConnContext(context.Background(), fourth))
	refused(dial()) // past Max, every connection trusted
	counts(2, 0)
	second.Close()
	third := admit()
	counts(2, 1)
	// A hijacked connection gives its place back; its owner closes the
	// connection under it.
	g.Hijacked(third)
	if _, ok := Unwrap(third).(*net.TCPConn); !ok {
		t.Fatalf("Unwrap gave a %T, want the TCP connection", Unwrap(third))
	}
	if live, untrusted := g.Counts(); live != 1 || untrusted != 0 {
		t.Fatalf("counts after a hijack %d live, %d untrusted; want 1, 0", live, untrusted)
	}
	third.Close()
	if live, _ := g.Counts(); live != 1 {
		t.Fatalf("closing a hijacked connection counted it again: %d live", live)
	}
}

// TestConnGuardNoTrust: without MaxUntrusted (peers checked when
// accepted), nothing makes way: past Max a new connection is refused and
// the one admitted stays open.
func TestConnGuardNoTrust(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &ConnGuard{Max: 1, Refusal: []byte("refused\n")}
	gl := g.Listener(ln)
	accepted := make(chan net.Conn, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := gl.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		gl.Close()
		<-done
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	first := dial()
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the first connection was not accepted")
	}
	second := dial()
	second.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, _ := io.ReadAll(second); string(b) != "refused\n" {
		t.Fatalf("past Max read %q; want the refusal", b)
	}
	first.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := first.Read(make([]byte, 1)); err == nil || !isTimeout(err) {
		t.Fatalf("the admitted connection: %v; want it open", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
