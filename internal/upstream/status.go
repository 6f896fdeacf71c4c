package upstream

import "time"

// ServerStatus is a snapshot of one configured server.
type ServerStatus struct {
	Name       string
	State      string // "idle", "starting", "ready" or "failed"
	PID        int
	Version    string
	ServerName string
	Since      time.Time // start of the live session, or end of the last one
	Starts     int
	Pending    int
	LastError  string
}

// Status returns a snapshot of every server, sorted by name.
func (p *Pool) Status() []ServerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ServerStatus, 0, len(p.slots))
	for _, name := range p.namesLocked() {
		sl := p.slots[name]
		st := ServerStatus{Name: name, State: "idle", Starts: sl.starts, Since: sl.lastEnd}
		if sl.lastErr != nil {
			st.LastError = sl.lastErr.Error()
			st.State = "failed"
		}
		switch {
		case sl.sess != nil:
			s := sl.sess
			st.State, st.PID, st.Version, st.Since = "ready", s.PID(), s.version, s.Started
			st.ServerName, st.Pending = s.serverInfo.Name, s.Pending()
		case sl.starting != nil:
			st.State = "starting"
		}
		out = append(out, st)
	}
	return out
}
