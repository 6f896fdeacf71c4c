package e2e

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

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
// the descriptor limit; the socket's peers are checked when accepted, so
// only the whole bound applies there), and one past the bound is refused
// with a 503 while a host's connection already trusted keeps serving;
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
				if r := h.do(modernDiscover, modernHeaders("server/discover", "")); r.Status != 200 || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
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
				bad.m.Token = "wrong"
				for range 200 {
					if r := bad.do(modernDiscover, modernHeaders("server/discover", "")); r.Status != 401 {
						t.Fatalf("a wrong token: %d, want 401", r.Status)
					}
				}
				if n := strings.Count(f.logs(), "http request refused"); n > 2 {
					t.Errorf("200 wrong tokens wrote %d log lines, want at most 2", n)
				}
			}
			// Idle connections past the bound.
			bound := hostileNofile / 2 / 4
			if f.unix {
				bound = hostileNofile / 2
			}
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
			f.settled(t, "the connection classes", before)
			discover("after")
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}
