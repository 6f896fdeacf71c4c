package hostile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// rawPost writes a POST's head to c, with a Content-Length of length and
// none of the body; extra are more header lines.
func rawPost(c net.Conn, host string, length int, extra ...string) {
	head := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n", length)
	for _, h := range extra {
		head += h + "\r\n"
	}
	io.WriteString(c, head+"\r\n")
}

// TestHostileConnections: on each HTTP face, a request refused for its
// credentials, or for a Content-Length over the limit, is answered at
// once, its body unread, and its connection closed; connections that
// never make a trusted request are bounded (a quarter of the bound, half
// the descriptor limit): 320 idle ones close the oldest of them, and a
// host's new connection with its token is served, as is one already
// trusted (MCP or /v1); the socket's peers are checked when accepted, so
// only the whole bound applies there, and one past it is refused with a
// 503;
// wrong tokens, many, write a line or two to the log.
// Afterwards the process holds what it held before.
func TestHostileConnections(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	for _, f := range hostileFaces(t, e) {
		t.Run(f.name, func(t *testing.T) {
			h := f.host(t)
			discover := func(what string) {
				t.Helper()
				if r := h.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", "")); r.Status != 200 || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
					t.Fatalf("%s: server/discover: %d %s", what, r.Status, r.Body)
				}
			}
			discover("before")
			before := f.usage(t)
			host := f.addr
			if f.unix {
				host = "localhost"
			}

			// Refused for its credentials, the body never sent.
			c := f.dial(t)
			if f.unix {
				rawPost(c, host, 100, "Origin: http://evil.example")
			} else {
				rawPost(c, host, 100, "Authorization: Bearer wrong")
			}
			got, closed := closedWithin(c, 5*time.Second)
			if !closed || (!strings.HasPrefix(got, "HTTP/1.1 401") && !strings.HasPrefix(got, "HTTP/1.1 403")) {
				t.Errorf("a refused request with its body unsent: closed %v after %q; want 401/403 and the connection closed", closed, firstLine(got))
			}

			// A Content-Length over the limit, the body never sent.
			c = f.dial(t)
			auth := []string{}
			if f.token != "" {
				auth = append(auth, "Authorization: Bearer "+f.token)
			}
			rawPost(c, host, 17<<20, auth...)
			got, closed = closedWithin(c, 5*time.Second)
			if !closed || !strings.HasPrefix(got, "HTTP/1.1 413") {
				t.Errorf("a 17 MiB Content-Length with the body unsent: closed %v after %q; want 413 and the connection closed", closed, firstLine(got))
			}

			// Wrong tokens, many: a line a window in the log, not one each.
			if !f.unix {
				bad := f.host(t)
				bad.M.Token = "wrong"
				for range 200 {
					if r := bad.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", "")); r.Status != 401 {
						t.Fatalf("a wrong token: %d, want 401", r.Status)
					}
				}
				if n := strings.Count(f.logs(), "http request refused"); n > 2 {
					t.Errorf("200 wrong tokens wrote %d log lines, want at most 2", n)
				}
			}
			// A /v1 request's connection is trusted as an MCP one is: it is
			// kept through the flood below.
			var v1 net.Conn
			if f.name == "daemon-http" {
				v1 = f.dial(t)
				if got := v1Status(t, v1, host, f.token); got != 200 {
					t.Fatalf("GET /v1/status with the token: %d", got)
				}
			}
			// Idle connections past the bound. On a TCP face connections
			// not yet trusted have their own budget (a quarter of the
			// bound): the oldest of them makes way for a new one, so that
			// a host's new connection is served whatever the flood; the
			// socket's peers are checked when accepted, and past its bound
			// a new connection is refused.
			if f.unix {
				bound := hostileNofile / 2
				var flood []net.Conn
				for range bound + 4 {
					flood = append(flood, f.dial(t))
				}
				last := flood[len(flood)-1]
				got, closed = closedWithin(last, 10*time.Second)
				if !closed || !strings.HasPrefix(got, "HTTP/1.1 503") {
					t.Errorf("connection %d of idle ones (bound %d): closed %v after %q; want a 503", len(flood), bound, closed, firstLine(got))
				}
				discover("during the flood, on a trusted connection")
				for _, c := range flood {
					c.Close()
				}
			} else {
				var flood []net.Conn
				for range 320 {
					flood = append(flood, f.dial(t))
				}
				fresh := f.host(t)
				if r := fresh.Do(harness.ModernDiscover, harness.ModernHeaders("server/discover", "")); r.Status != 200 {
					t.Errorf("a new connection with the token, during a flood of 320 idle ones: %d %s; want 200", r.Status, r.Body)
				}
				discover("during the flood, on a trusted connection")
				// Closed for the newer ones, well before an idle
				// connection's own time (10s for its request's head).
				if got, closed := closedWithin(flood[0], 3*time.Second); !closed || got != "" {
					t.Errorf("the oldest of 320 idle connections: closed %v after %q; want it closed for the newer ones", closed, firstLine(got))
				}
				if v1 != nil {
					if got := v1Status(t, v1, host, f.token); got != 200 {
						t.Errorf("GET /v1/status again on its connection, during the flood: %d; want 200", got)
					}
				}
				for _, c := range flood {
					c.Close()
				}
			}
			f.settled(t, "the connection classes", before)
			discover("after")
		})
	}
}

// v1Status GETs /v1/status on c with token and returns the status, -1
// when no answer comes; the connection is kept alive.
func v1Status(t *testing.T, c net.Conn, host, token string) int {
	t.Helper()
	io.WriteString(c, "GET /v1/status HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+token+"\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Logf("GET /v1/status: %v", err)
		return -1
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}
