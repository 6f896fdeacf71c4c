package hostserver

import (
	"sort"
	"sync"
	"time"
)

// HostInfo describes one connected host, for status and the live view.
type HostInfo struct {
	ID        string // host-N, as the log and the calls in flight name it
	Client    string // its clientInfo.name ("" before initialize)
	Version   string // the protocol revision agreed ("" before initialize)
	Transport string // "stdio" (a stream: mcpx serve, the socket) or "http" (a legacy HTTP session)
	Principal string // who it is to mcpx: its token's name for HTTP hosts with one
	Since     time.Time
}

// connected is the set of connected hosts: stream connections and legacy
// HTTP sessions (a 2026-07-28 request over HTTP has no session to list).
type connected struct {
	mu    sync.Mutex
	hosts map[*hostSession]HostInfo
}

// add lists hs until the returned func is called.
func (c *connected) add(hs *hostSession, transport, principal string) (remove func()) {
	c.mu.Lock()
	if c.hosts == nil {
		c.hosts = map[*hostSession]HostInfo{}
	}
	c.hosts[hs] = HostInfo{ID: hs.id, Transport: transport, Principal: principal, Since: time.Now()}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.hosts, hs)
		c.mu.Unlock()
	}
}

// Hosts returns the connected hosts, oldest first.
func (s *Server) Hosts() []HostInfo {
	s.connected.mu.Lock()
	out := make([]HostInfo, 0, len(s.connected.hosts))
	sessions := make([]*hostSession, 0, len(s.connected.hosts))
	for hs, info := range s.connected.hosts {
		out = append(out, info)
		sessions = append(sessions, hs)
	}
	s.connected.mu.Unlock()
	for i, hs := range sessions {
		hs.mu.Lock()
		out[i].Client, out[i].Version = hs.clientName, hs.version
		hs.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}
