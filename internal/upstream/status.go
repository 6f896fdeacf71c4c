package upstream

import "time"

// ServerStatus is a snapshot of one configured server.
type ServerStatus struct {
	Name       string
	State      string // "idle", "starting", "ready", "failed" or "stopped" (idle stop)
	PID        int
	Version    string
	ServerName string
	Since      time.Time // start of the live session, or end of the last one
	Starts     int
	Pending    int
	LastError  string
	Eager      bool
	// Failures counts failed starts in a row and Crashes early crashes in
	// a row; while RetryAt is ahead, the server is not started again (by
	// a call, after failed starts; on its own, for an eager server).
	Failures int
	Crashes  int
	RetryAt  time.Time
	// PerHost marks a server with a session per host; HostSessions counts
	// those running or starting (beside the shared one, which the fields
	// above describe), and HostPending their requests awaiting an answer.
	PerHost      bool
	HostSessions int
	HostPending  int
}

// Status returns a snapshot of every server, sorted by name.
func (p *Pool) Status() []ServerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ServerStatus, 0, len(p.entries))
	for _, name := range p.namesLocked() {
		en := p.entries[name]
		st := ServerStatus{Name: name, State: "idle", Starts: en.starts, Since: en.lastEnd, Eager: en.cfg.Eager, Failures: en.failures, Crashes: en.crashes,
			PerHost: en.cfg.PerHost, HostSessions: en.liveHosts()}
		for _, h := range en.hosts {
			if h.sess != nil {
				st.HostPending += h.sess.Pending()
			}
		}
		next := en.retryAt
		if en.cfg.Eager {
			next = en.nextStart()
		}
		if (en.failures > 0 || en.cfg.Eager) && time.Now().Before(next) {
			st.RetryAt = next
		}
		if en.idleTools != nil {
			st.State = "stopped"
		}
		if en.lastErr != nil {
			st.LastError = en.lastErr.Error()
			st.State = "failed"
		}
		switch {
		case en.sess != nil:
			s := en.sess
			st.State, st.PID, st.Version, st.Since = "ready", s.PID(), s.version, s.Started
			st.ServerName, st.Pending = s.serverInfo.Name, s.Pending()
		case en.starting != nil:
			st.State = "starting"
		}
		out = append(out, st)
	}
	return out
}
