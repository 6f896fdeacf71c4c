package sock

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns a RawTCP connection accepted through RawTCPListener and
// a plain one dialled to it.
func tcpPair(t *testing.T) (raw, plain net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rl := RawTCPListener(ln)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := rl.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	plain, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	select {
	case raw = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("no connection accepted")
	}
	if raw == nil {
		t.FailNow()
	}
	t.Cleanup(func() { raw.Close() })
	if _, ok := raw.(*rawTCPConn); !ok {
		t.Fatalf("accepted a %T, want the raw connection", raw)
	}
	return raw, plain
}

// TestRawTCPBothWays: more than the socket buffers hold goes each way;
// CloseWrite (the TCP connection's own) ends the peer's reading with
// io.EOF, and the raw side reads io.EOF itself, unwrapped.
func TestRawTCPBothWays(t *testing.T) {
	raw, plain := tcpPair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
	for _, dir := range []struct {
		name string
		w, r net.Conn
	}{{"raw to plain", raw, plain}, {"plain to raw", plain, raw}} {
		done := make(chan error, 1)
		go func() {
			n, err := dir.w.Write(want)
			if err == nil && n != len(want) {
				err = io.ErrShortWrite
			}
			if err == nil {
				err = dir.w.(interface{ CloseWrite() error }).CloseWrite()
			}
			done <- err
		}()
		got, err := io.ReadAll(dir.r)
		if err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes, wrote %d", dir.name, len(got), len(want))
		}
	}
}

// TestRawTCPErrors: errors look as the net package's do, which net/http
// relies on: a deadline is a *net.OpError that is a timeout, a closed
// connection is net.ErrClosed.
func TestRawTCPErrors(t *testing.T) {
	raw, plain := tcpPair(t)
	raw.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := raw.Read(make([]byte, 10))
	var op *net.OpError
	var ne net.Error
	if !errors.As(err, &op) || op.Op != "read" || !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline: %#v, want a read *net.OpError that is a timeout", err)
	}
	raw.SetReadDeadline(time.Time{})

	// A write that has begun and then waits for room is ended by a deadline
	// set while it waits. The order is the test's, not the clock's: the
	// peer reads the first byte (so the write has begun), then the deadline
	// is set in the past; a short deadline set before the Write could pass
	// before its first system call, and the Write would write nothing.
	type result struct {
		n   int
		err error
	}
	wrote := make(chan result, 1)
	go func() {
		n, err := raw.Write(make([]byte, 64<<20)) // the peer reads one byte: the buffers fill
		wrote <- result{n, err}
	}()
	plain.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(plain, make([]byte, 1)); err != nil {
		t.Fatalf("the write's first byte: %v", err)
	}
	raw.SetWriteDeadline(time.Now().Add(-time.Second))
	var w result
	select {
	case w = <-wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("a deadline set in the past did not end the Write")
	}
	if !errors.As(w.err, &op) || op.Op != "write" || !errors.Is(w.err, os.ErrDeadlineExceeded) || w.n <= 0 || w.n >= 64<<20 {
		t.Fatalf("Write past its deadline = %d, %#v; want part of it and a write *net.OpError", w.n, w.err)
	}

	done := make(chan error, 1)
	go func() {
		raw.SetReadDeadline(time.Time{})
		_, err := raw.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it wait; the test holds either way
	raw.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read ended by Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Read")
	}
}

// TestRawTCPOthers: a connection that is not TCP is returned as it is.
func TestRawTCPOthers(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := RawTCP(a); got != a {
		t.Fatalf("RawTCP(net.Pipe()) = %T, want it unchanged", got)
	}
}

// TestRawTCPOrdersForTheRaceDetector: a goroutine sets a variable, then
// writes; another reads what it wrote, then uses the variable. The bytes
// order the two, and under the race detector (scripts/test runs it) the
// raw side must say so as the syscall package does, or this is reported
// as a race. Both ways: raw write to plain read, plain write to raw read.
func TestRawTCPOrdersForTheRaceDetector(t *testing.T) {
	raw, plain := tcpPair(t)
	for _, dir := range []struct {
		name string
		w, r net.Conn
	}{{"raw to plain", raw, plain}, {"plain to raw", plain, raw}} {
		var set int
		go func() {
			set = 1
			dir.w.Write([]byte{1})
		}()
		if _, err := io.ReadFull(dir.r, make([]byte, 1)); err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		if set != 1 {
			t.Fatalf("%s: the write came before the variable was set", dir.name)
		}
	}
}
