package daemon

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveLimited serves h as the daemon serves its faces, with a body
// timeout of its own, until the test ends.
func serveLimited(t *testing.T, h http.Handler, body time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := newConnGuard(true)
	srv := httpServer(h, slog.New(slog.DiscardHandler), g)
	srv.Handler = bodyDeadline(h, body)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(g.Listener(ln))
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c within d, reading
// whatever it sends first.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestBodyDrippedEnds: a body dripped a byte at a time ends with its
// connection once its time is up; one sent whole is served, and the
// response stream after it outlives that time.
func TestBodyDrippedEnds(t *testing.T) {
	const bodyTime = 200 * time.Millisecond
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select { // a stream that lasts past the body's time
		case <-time.After(3 * bodyTime):
			w.Write(b)
		case <-r.Context().Done():
		}
	}), bodyTime)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx")
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("a connection whose body never came was kept 10s")
	}

	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("whole"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil || string(got) != "whole" {
		t.Fatalf("a whole body's stream: %q, %v; want it to outlive the body's time", got, err)
	}
}

// TestConnRefusalIsHTTP: the refusal is a whole HTTP response, its body
// as long as it says.
func TestConnRefusalIsHTTP(t *testing.T) {
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(connRefusal))), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 503 || !strings.Contains(string(body), "too many connections") {
		t.Fatalf("refusal: %d %q %v", resp.StatusCode, body, err)
	}
}
