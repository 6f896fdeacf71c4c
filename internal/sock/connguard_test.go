package sock

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestConnGuard: past MaxUntrusted connections not yet trusted, a new one
// is refused with the refusal, readable by a peer that sent a request;
// trusting one frees its place; past Max any new one is refused; closing
// one gives its place back.
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
	first := admit()
	refused(dial()) // one untrusted already
	if live, untrusted := g.Counts(); live != 1 || untrusted != 1 {
		t.Fatalf("counts %d live, %d untrusted; want 1, 1", live, untrusted)
	}
	Trust(g.ConnContext(context.Background(), first))
	second := admit()
	refused(dial()) // Max reached
	second.Close()
	third := admit()
	if live, untrusted := g.Counts(); live != 2 || untrusted != 1 {
		t.Fatalf("counts %d live, %d untrusted; want 2, 1", live, untrusted)
	}
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
