package relay

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Heartbeats. A host whose timer progress resets (its profile's
// ResetOnProgress) would drop a call whose server works in silence: it
// hears nothing, and its timer fires. While the host has been sent no
// progress for heartbeatEvery of its timer, mcpx sends it a progress
// notification of its own, under the host's token, on the call's stream
// (Call.Progress), saying what it waits on. A host that gave no progress
// token gets none (the spec allows no progress without one), and neither
// does a host with a hard timer or none (no notification would help).
//
// Values: the host must see strictly increasing values, and a heartbeat
// claims no progress, so each is the smallest float64 above the last
// value the host was sent (0 if none): a progress bar does not move. The
// upstream's own later value is almost always above it; when it is not
// (a value within a few units in the last place of the last one), it
// goes to the host as the smallest value above the heartbeat's, so the
// host's values still increase and the upstream's value is never below a
// heartbeat's.
//
// A heartbeat touches neither mcpx's idle timer toward the upstream (the
// server said nothing) nor the call's status (the server's progress).

// heartbeatEvery is the share of the host's timer after which a silent
// call gets a heartbeat: a third leaves the host two more chances before
// its timer fires if one is late.
const heartbeatEvery = 3

// minHeartbeat bounds how often heartbeats go out, whatever a configured
// timer says.
const minHeartbeat = 50 * time.Millisecond

// wantsHeartbeats reports whether c's host is to get heartbeats: its
// timer is reset by progress, and it gave a token to send them under.
func wantsHeartbeats(c *Call) bool {
	p := c.HostProfile
	return p.ResetOnProgress && p.Timeout > 0 && c.HostToken != nil && c.Progress != nil
}

// heartbeat is a call's heartbeat state, guarded by its callState's mu;
// made only for a call that gets heartbeats.
type heartbeat struct {
	every    time.Duration
	t        *time.Timer
	stopped  bool
	label    string    // the tool as the host named it
	lastSent time.Time // the last progress the host was sent, or its request
	lastNews time.Time // the upstream's last progress, or the host's request
	sent     float64   // the last value the host was sent
	any      bool      // whether sent holds one
	total    json.RawMessage
	beats    int
}

// startHeartbeat starts st's heartbeats if its host's profile calls for
// them; since is when the host sent the request, label the tool's name as
// the host called it.
func (st *callState) startHeartbeat(since time.Time, label string) {
	c := st.call
	if !wantsHeartbeats(c) {
		return
	}
	st.mu.Lock() // the first beat may be due at once
	defer st.mu.Unlock()
	hb := &heartbeat{}
	st.hb = hb
	hb.every = max(c.HostProfile.Timeout/heartbeatEvery, minHeartbeat)
	now := time.Now()
	if since.IsZero() || since.After(now) {
		since = now
	}
	hb.label, hb.lastSent, hb.lastNews = label, since, since
	hb.t = time.AfterFunc(since.Add(hb.every).Sub(now), st.beat)
}

// stopHeartbeat stops st's heartbeats for good: none is sent after it
// returns.
func (st *callState) stopHeartbeat() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if hb := st.hb; hb != nil {
		hb.stopped = true
		hb.t.Stop()
	}
}

// beat runs when the heartbeat timer fires: a heartbeat if the host has
// been sent nothing for hb.every, else the timer set for when that is due.
func (st *callState) beat() {
	st.mu.Lock()
	defer st.mu.Unlock()
	hb := st.hb
	if hb.stopped {
		return
	}
	now := time.Now()
	if due := hb.lastSent.Add(hb.every); now.Before(due) {
		hb.t.Reset(due.Sub(now))
		return
	}
	v := 0.0
	if hb.any {
		v = math.Nextafter(hb.sent, math.Inf(1))
	}
	p := &jsonrpc.Object{}
	p.Set(mcp.MetaProgressToken, st.call.HostToken)
	p.Set("progress", formatProgress(v))
	if hb.total != nil {
		p.Set("total", hb.total)
	}
	p.Set("message", jsonrpc.Quote("waiting on "+hb.label+": no news for "+seconds(now.Sub(hb.lastNews))))
	hb.sent, hb.any, hb.lastSent = v, true, now
	hb.beats++
	st.call.Progress(p.Bytes())
	hb.t.Reset(hb.every)
}

// newsLocked notes that the upstream sent progress for the call (any
// notification, passed on or not): the heartbeats' "no news" counts from
// it. st.mu is held.
func (st *callState) newsLocked() {
	if st.hb != nil {
		st.hb.lastNews = time.Now()
	}
}

// forwardLocked is called with each upstream notification on its way to
// the host (obj, whose value is v), after newsLocked: the host has been
// sent something, and the value is raised above the last heartbeat's if
// it is not above it already. st.mu is held.
func (st *callState) forwardLocked(obj *jsonrpc.Object, v float64) {
	hb := st.hb
	if hb == nil {
		return
	}
	if hb.any && v <= hb.sent {
		v = math.Nextafter(hb.sent, math.Inf(1))
		obj.Set("progress", formatProgress(v))
	}
	if raw, ok := obj.Get("total"); ok && len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		hb.total = append(hb.total[:0], raw...) // a number: heartbeats repeat it
	}
	hb.sent, hb.any, hb.lastSent = v, true, hb.lastNews
}

// formatProgress is v as a JSON number, as short as it reads back exactly.
func formatProgress(v float64) json.RawMessage {
	return strconv.AppendFloat(nil, v, 'g', -1, 64)
}

// seconds prints d in whole seconds ("40 s"), or tenths under ten.
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 0, 64) + " s"
}

// hostToolName is the tool's name as the host called it (the params'
// name, before the relay sets the upstream's), for heartbeat messages;
// server.tool if the params name none. It reads the params only for a
// call that gets heartbeats.
func hostToolName(c *Call) string {
	if !wantsHeartbeats(c) {
		return ""
	}
	if c.Params != nil {
		if raw, ok := c.Params.Get("name"); ok {
			if s, ok := jsonrpc.Unquote(raw); ok && s != "" {
				return s
			}
		}
	}
	return c.Server + "." + c.Tool
}
