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

// HeartbeatInterval is how long a stream to a host with timer timeout
// may be silent before it gets a heartbeat.
func HeartbeatInterval(timeout time.Duration) time.Duration {
	return max(timeout/heartbeatEvery, minHeartbeat)
}

// wantsHeartbeats reports whether c's host is to get heartbeats: its
// timer is reset by progress, and it gave a token to send them under.
func wantsHeartbeats(c *Call) bool {
	p := c.HostProfile
	return p.ResetOnProgress && p.Timeout > 0 && c.HostToken != nil && c.Progress != nil
}

// Heartbeat is the timing and values of the heartbeats on one progress
// stream to a host: a call's (here) or a script's (code mode). It does
// not lock: its owner guards it with a lock of its own, held in every
// call of its methods and in the timer's function, and builds and sends
// the notifications itself (under that lock, so that they keep their
// order with the stream's other progress).
type Heartbeat struct {
	every    time.Duration
	t        *time.Timer
	stopped  bool
	lastSent time.Time // the last progress the host was sent, or its request
	lastNews time.Time // the worker's last progress, or the host's request
	sent     float64   // the last value the host was sent
	any      bool      // whether sent holds one
}

// NewHeartbeat starts the heartbeats of a stream silent since since:
// fire runs after every of silence, and again each time it is due; it
// takes the owner's lock and asks Due. The owner holds its lock while
// storing the result, as fire may run at once.
func NewHeartbeat(every time.Duration, since time.Time, fire func()) *Heartbeat {
	now := time.Now()
	if since.IsZero() || since.After(now) {
		since = now
	}
	hb := &Heartbeat{every: every, lastSent: since, lastNews: since}
	hb.t = time.AfterFunc(since.Add(every).Sub(now), fire)
	return hb
}

// Due is called by the timer's function: ok when a heartbeat is to go
// now, with its value (the smallest above the last one sent, which it
// records as sent) and how long the worker has been silent; otherwise the
// timer is set for when one is due.
func (hb *Heartbeat) Due() (value float64, silent time.Duration, ok bool) {
	if hb.stopped {
		return 0, 0, false
	}
	now := time.Now()
	if due := hb.lastSent.Add(hb.every); now.Before(due) {
		hb.t.Reset(due.Sub(now))
		return 0, 0, false
	}
	if hb.any {
		value = math.Nextafter(hb.sent, math.Inf(1))
	}
	hb.sent, hb.any, hb.lastSent = value, true, now
	hb.t.Reset(hb.every)
	return value, now.Sub(hb.lastNews), true
}

// News notes that the worker sent progress at at (passed on or not): the
// silence a heartbeat reports counts from it.
func (hb *Heartbeat) News(at time.Time) { hb.lastNews = at }

// Forward is called with each of the worker's own values on its way to
// the host, after News: it returns v, raised to the smallest value above
// the last one sent if it is not above it already (the host's values
// must increase), and counts it as sent at the news' time.
func (hb *Heartbeat) Forward(v float64) float64 {
	if hb.any && v <= hb.sent {
		v = math.Nextafter(hb.sent, math.Inf(1))
	}
	hb.sent, hb.any, hb.lastSent = v, true, hb.lastNews
	return v
}

// Stop ends the heartbeats: fire asks Due no more, and Due says none is
// due.
func (hb *Heartbeat) Stop() {
	hb.stopped = true
	hb.t.Stop()
}

// heartbeat is a call's heartbeats, guarded by its callState's mu; made
// only for a call that gets heartbeats.
type heartbeat struct {
	*Heartbeat
	label string // the tool as the host named it
	total json.RawMessage
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
	st.hb = &heartbeat{Heartbeat: NewHeartbeat(HeartbeatInterval(c.HostProfile.Timeout), since, st.beat), label: label}
}

// stopHeartbeat stops st's heartbeats for good: none is sent after it
// returns.
func (st *callState) stopHeartbeat() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if hb := st.hb; hb != nil {
		hb.Stop()
	}
}

// beat runs when the heartbeat timer fires: a heartbeat if the host has
// been sent nothing for a while (see Heartbeat.Due).
func (st *callState) beat() {
	st.mu.Lock()
	defer st.mu.Unlock()
	hb := st.hb
	v, silent, ok := hb.Due()
	if !ok {
		return
	}
	p := &jsonrpc.Object{}
	p.Set(mcp.MetaProgressToken, st.call.HostToken)
	p.Set("progress", formatProgress(v))
	if hb.total != nil {
		p.Set("total", hb.total)
	}
	p.Set("message", jsonrpc.Quote("waiting on "+hb.label+": no news for "+Seconds(silent)))
	st.call.Progress(p.Bytes())
}

// newsLocked notes that the upstream sent progress for the call (any
// notification, passed on or not): the heartbeats' "no news" counts from
// it. st.mu is held.
func (st *callState) newsLocked() {
	if st.hb != nil {
		st.hb.News(time.Now())
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
	if raised := hb.Forward(v); raised != v {
		obj.Set("progress", formatProgress(raised))
	}
	if raw, ok := obj.Get("total"); ok && len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		hb.total = append(hb.total[:0], raw...) // a number: heartbeats repeat it
	}
}

// formatProgress is v as a JSON number, as short as it reads back exactly.
func formatProgress(v float64) json.RawMessage {
	return strconv.AppendFloat(nil, v, 'g', -1, 64)
}

// Seconds prints d in whole seconds ("40 s"), or tenths under ten, as a
// heartbeat's message says how long its stream has been silent.
func Seconds(d time.Duration) string {
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
