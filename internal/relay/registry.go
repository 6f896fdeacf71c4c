package relay

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// HostKey names one host request: the host connection (or API client) and
// the request id exactly as the host wrote it.
type HostKey struct {
	Session string
	ID      string
}

// ErrDuplicateID is returned for a request id the same host already has in
// flight.
var ErrDuplicateID = errors.New("request id already in use by an in-flight request")

// Registry holds every in-flight host request that may wait on an upstream.
type Registry struct {
	mu     sync.Mutex
	next   uint64
	byID   map[uint64]*Entry
	byHost map[HostKey]*Entry
	// perSession counts the entries of byID by host connection, those
	// already cancelled and winding down included.
	perSession map[string]int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byID: map[uint64]*Entry{}, byHost: map[HostKey]*Entry{}, perSession: map[string]int{}}
}

// Entry is one registered request. Its identity fields are immutable; what
// the call learns as it runs is guarded by mu.
type Entry struct {
	ID   uint64
	Host HostKey
	// Owner is the ID of the principal the request acts for (package
	// principal), "" for none named.
	Owner   string
	Method  string
	Started time.Time
	cancel  context.CancelCauseFunc
	instead atomic.Pointer[context.CancelCauseFunc] // see Intercept
	onNews  atomic.Pointer[func(Progress)]          // see OnProgress

	mu         sync.Mutex
	server     string
	tool       string
	upstreamID int64
	progress   float64
	total      *float64
	message    string
	updates    int
}

// Add registers a request whose context is cancelled by cancel.
func (g *Registry) Add(host HostKey, method string, cancel context.CancelCauseFunc) (*Entry, error) {
	return g.AddLimited(host, method, cancel, 0)
}

// AddLimited is Add for a host connection that may have at most limit
// requests registered at once (0: no limit), those cancelled but still
// winding down included; beyond that it fails with a *HostLimitError.
func (g *Registry) AddLimited(host HostKey, method string, cancel context.CancelCauseFunc, limit int) (*Entry, error) {
	return g.AddFor("", host, method, cancel, limit)
}

// AddFor is AddLimited for a request that acts for owner (the ID of its
// principal), whom status shows it to and who alone, besides the local
// user, may cancel it by id.
func (g *Registry) AddFor(owner string, host HostKey, method string, cancel context.CancelCauseFunc, limit int) (*Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.byHost[host]; dup {
		return nil, ErrDuplicateID
	}
	if limit > 0 && g.perSession[host.Session] >= limit {
		return nil, &HostLimitError{Limit: limit}
	}
	g.next++
	e := &Entry{ID: g.next, Host: host, Owner: owner, Method: method, Started: time.Now(), cancel: cancel}
	g.byID[e.ID] = e
	g.byHost[host] = e
	g.perSession[host.Session]++
	return e, nil
}

// Remove unregisters e. It is idempotent.
func (g *Registry) Remove(e *Entry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byID[e.ID] == e {
		delete(g.byID, e.ID)
		if g.perSession[e.Host.Session]--; g.perSession[e.Host.Session] <= 0 {
			delete(g.perSession, e.Host.Session)
		}
	}
	if g.byHost[e.Host] == e {
		delete(g.byHost, e.Host)
	}
}

// CancelHost cancels the request of host with cause; it reports whether
// one was in flight. The host has given the id up: it may use it again at
// once (a 2026-07-28 id need only be unique among outstanding requests),
// even while the cancelled request is still winding down.
func (g *Registry) CancelHost(host HostKey, cause error) bool {
	g.mu.Lock()
	e := g.byHost[host]
	delete(g.byHost, host)
	g.mu.Unlock()
	if e == nil {
		return false
	}
	e.cancelWith(cause)
	return true
}

// Intercept makes every later cancel of e through the registry call f
// instead of e's own cancel: a request whose call became a job, and whose
// host left without its answer, decides which cancels still reach the
// call (its host's own cancel) and which no longer do (its connection's
// end).
func (e *Entry) Intercept(f context.CancelCauseFunc) { e.instead.Store(&f) }

func (e *Entry) cancelWith(cause error) {
	if f := e.instead.Load(); f != nil {
		(*f)(cause)
		return
	}
	e.cancel(cause)
}

// Progress is a call's progress as its upstream last reported it.
type Progress struct {
	Value   float64
	Total   *float64
	Message string
}

// LastProgress returns the call's last progress, and whether it has had
// any.
func (e *Entry) LastProgress() (Progress, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Progress{Value: e.progress, Total: e.total, Message: e.message}, e.updates > 0
}

// Note records progress of the request's own (a script's, which has no
// upstream of its own), as its upstream's is recorded.
func (e *Entry) Note(p Progress) { e.update(p.Value, p.Total, p.Message) }

// OnProgress makes each later progress of the call (its upstream's own,
// as status shows it) call f too, on the goroutine that reads it; f must
// not block. A call that became a job keeps its progress so.
func (e *Entry) OnProgress(f func(Progress)) { e.onNews.Store(&f) }

// Owner returns the owner of the request with registry id id, and
// whether one is in flight.
func (g *Registry) Owner(id uint64) (owner string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.byID[id]
	if e == nil {
		return "", false
	}
	return e.Owner, true
}

// CancelID cancels the request with registry id id.
func (g *Registry) CancelID(id uint64, cause error) bool {
	g.mu.Lock()
	e := g.byID[id]
	g.mu.Unlock()
	if e == nil {
		return false
	}
	e.cancelWith(cause)
	return true
}

// CancelSession cancels every request of one host connection and returns
// how many there were.
func (g *Registry) CancelSession(session string, cause error) int {
	return g.cancelWhere(func(e *Entry) bool { return e.Host.Session == session }, cause)
}

// CancelAll cancels every request.
func (g *Registry) CancelAll(cause error) int {
	return g.cancelWhere(func(*Entry) bool { return true }, cause)
}

func (g *Registry) cancelWhere(match func(*Entry) bool, cause error) int {
	g.mu.Lock()
	var hit []*Entry
	for _, e := range g.byID {
		if match(e) {
			hit = append(hit, e)
		}
	}
	g.mu.Unlock()
	for _, e := range hit {
		e.cancelWith(cause)
	}
	return len(hit)
}

// Len returns the number of in-flight requests.
func (g *Registry) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.byID)
}

// SessionLen returns the number of in-flight requests of one host
// connection, as AddLimited counts them.
func (g *Registry) SessionLen(session string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.perSession[session]
}

// CallStatus is a snapshot of one in-flight request.
type CallStatus struct {
	ID         uint64
	Host       HostKey
	Owner      string
	Method     string
	Server     string
	Tool       string
	UpstreamID int64
	Started    time.Time
	Progress   float64
	Total      *float64
	Message    string
	Updates    int
}

// Snapshot returns every in-flight request, oldest first.
func (g *Registry) Snapshot() []CallStatus {
	g.mu.Lock()
	entries := make([]*Entry, 0, len(g.byID))
	for _, e := range g.byID {
		entries = append(entries, e)
	}
	g.mu.Unlock()
	out := make([]CallStatus, 0, len(entries))
	for _, e := range entries {
		e.mu.Lock()
		out = append(out, CallStatus{
			ID: e.ID, Host: e.Host, Owner: e.Owner, Method: e.Method, Server: e.server, Tool: e.tool,
			UpstreamID: e.upstreamID, Started: e.Started, Progress: e.progress,
			Total: e.total, Message: e.message, Updates: e.updates,
		})
		e.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (e *Entry) attach(server, tool string, upstreamID int64) {
	e.mu.Lock()
	e.server, e.tool, e.upstreamID = server, tool, upstreamID
	e.mu.Unlock()
}

func (e *Entry) update(progress float64, total *float64, message string) {
	e.mu.Lock()
	e.progress, e.total, e.message = progress, total, message
	e.updates++
	e.mu.Unlock()
	if f := e.onNews.Load(); f != nil {
		(*f)(Progress{Value: progress, Total: total, Message: message})
	}
}
