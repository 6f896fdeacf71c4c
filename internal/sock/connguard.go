package sock

import (
	"context"
	"net"
	"sync"
	"time"
)

// ConnGuard bounds the connections an HTTP server keeps: Max at once, and
// of those at most MaxUntrusted that have not yet made a request its
// handler trusted (see [Trust]). With MaxUntrusted set, untrusted
// connections have a budget of their own: a new connection past either
// bound takes the place of the oldest untrusted one, which is closed (a
// client that opens connections and sends nothing cannot keep a trusted
// host out: the host's new connection is the newest, and its request is
// trusted as soon as it comes). A connection past the bounds with no
// untrusted one to take the place of (or with MaxUntrusted 0, past Max)
// is refused at once: Refusal is written to it (an HTTP response saying
// why), and it is closed after its peer has had a moment to read it.
//
// Wire it as an http.Server's listener ([ConnGuard.Listener]) and
// ConnContext ([ConnGuard.ConnContext]). A ConnGuard is safe for
// concurrent use; the listener's Close waits for the refusals under way.
type ConnGuard struct {
	Max          int // 0: no bound
	MaxUntrusted int // 0: only Max
	Refusal      []byte

	mu        sync.Mutex
	live      int
	untrusted int
	oldest    *guardedConn // the untrusted connections, oldest first
	newest    *guardedConn
	refusing  sync.WaitGroup
	nRefusing int
}

// maxRefusing bounds the refused connections given a moment to read
// their refusal; past it they are closed at once.
const maxRefusing = 64

// refusalLinger is how long a refused connection has to read its refusal.
const refusalLinger = time.Second

// Counts returns the connections open now, and how many of them are not
// yet trusted.
func (g *ConnGuard) Counts() (live, untrusted int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.live, g.untrusted
}

// Listener returns ln whose connections g bounds.
func (g *ConnGuard) Listener(ln net.Listener) net.Listener { return &guardListener{Listener: ln, g: g} }

type guardListener struct {
	net.Listener
	g *ConnGuard
}

func (l *guardListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := l.g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

func (l *guardListener) Close() error {
	err := l.Listener.Close()
	l.g.refusing.Wait()
	return err
}

// admit returns c guarded, or nil once it has refused c.
func (g *ConnGuard) admit(c net.Conn) net.Conn {
	g.mu.Lock()
	full := func() bool {
		return (g.Max > 0 && g.live >= g.Max) || (g.MaxUntrusted > 0 && g.untrusted >= g.MaxUntrusted)
	}
	var evicted *guardedConn
	if full() && g.MaxUntrusted > 0 && g.oldest != nil {
		evicted = g.oldest
		evicted.releaseLocked()
	}
	if !full() {
		gc := &guardedConn{Conn: c, g: g}
		g.live++
		g.untrusted++
		g.pushLocked(gc)
		g.mu.Unlock()
		if evicted != nil {
			evicted.Conn.Close() // its server sees the read fail, and closes it
		}
		return gc
	}
	linger := g.nRefusing < maxRefusing
	if linger {
		g.nRefusing++
		g.refusing.Add(1)
	}
	g.mu.Unlock()
	if !linger {
		c.Close()
		return nil
	}
	go func() {
		defer func() {
			g.mu.Lock()
			g.nRefusing--
			g.mu.Unlock()
			g.refusing.Done()
		}()
		refuse(c, g.Refusal)
	}()
	return nil
}

// refuse writes msg to c, stops writing, and reads what the peer sent
// until it closes or refusalLinger passes: closing a socket with unread
// input resets it, and the peer would lose the refusal.
func refuse(c net.Conn, msg []byte) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(refusalLinger))
	if _, err := c.Write(msg); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// guardedConn is an admitted connection: closing it gives its place back.
type guardedConn struct {
	net.Conn
	g *ConnGuard

	trusted, closed bool         // under g.mu
	prev, next      *guardedConn // in g's untrusted list, while untrusted and open
}

func (c *guardedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// release gives the connection's place back, once.
func (c *guardedConn) release() {
	c.g.mu.Lock()
	c.releaseLocked()
	c.g.mu.Unlock()
}

func (c *guardedConn) releaseLocked() {
	if !c.closed {
		c.closed = true
		c.g.live--
		if !c.trusted {
			c.g.untrusted--
			c.g.unlinkLocked(c)
		}
	}
}

// pushLocked adds c, untrusted, as the newest of g's untrusted list.
func (g *ConnGuard) pushLocked(c *guardedConn) {
	c.prev = g.newest
	if g.newest != nil {
		g.newest.next = c
	} else {
		g.oldest = c
	}
	g.newest = c
}

// unlinkLocked takes c out of g's untrusted list.
func (g *ConnGuard) unlinkLocked(c *guardedConn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		g.oldest = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		g.newest = c.prev
	}
	c.prev, c.next = nil, nil
}

// Hijacked gives back the place of c (one of g's, or any other: then it
// does nothing) when its HTTP server lets go of it (http.StateHijacked):
// it is no longer an HTTP connection, and whoever took it closes the
// connection it wraps.
func (g *ConnGuard) Hijacked(c net.Conn) {
	if gc, ok := c.(*guardedConn); ok && gc.g == g {
		gc.release()
	}
}

// Unwrap returns the connection under a guarded one, else c: a
// hijacker's, for what only the real connection offers (its descriptor).
func Unwrap(c net.Conn) net.Conn {
	if gc, ok := c.(*guardedConn); ok {
		return gc.Conn
	}
	return c
}

type guardKey struct{}

// ConnContext is an http.Server's ConnContext: it lets [Trust] find the
// connection a request came on.
func (g *ConnGuard) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*guardedConn); ok {
		return context.WithValue(ctx, guardKey{}, gc)
	}
	return ctx
}

// Trust marks the connection of a request's context as trusted (its
// request passed the handler's checks): it no longer counts against
// MaxUntrusted. Without a guarded connection it does nothing.
func Trust(ctx context.Context) {
	gc, ok := ctx.Value(guardKey{}).(*guardedConn)
	if !ok {
		return
	}
	gc.g.mu.Lock()
	if !gc.trusted && !gc.closed {
		gc.trusted = true
		gc.g.untrusted--
		gc.g.unlinkLocked(gc)
	}
	gc.g.mu.Unlock()
}

// CloseWrite is the connection's own (net/http half-closes a connection
// before closing it, so that its last answer is not reset).
func (c *guardedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
