package hostserver

import (
	"math"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// scriptProgress sends a script's progress to its host under the
// request's token, and, for a host whose timer progress resets, a
// heartbeat whenever the host has been sent nothing for a third of that
// timer, as the relay does for a call whose server is silent: its value
// the smallest above the last one sent (a progress bar does not move),
// its message naming the script. A value of the script's own that is not
// above a heartbeat's goes as the smallest above it, so the host's values
// always increase. Nothing is sent after stop returns.
type scriptProgress struct {
	push        func(params []byte)
	withMessage bool
	token       []byte
	label       string

	mu       sync.Mutex
	sent     float64
	any      bool
	lastSent time.Time
	lastNews time.Time
	every    time.Duration
	t        *time.Timer
	stopped  bool
}

// startScriptProgress returns the progress sender of one script; its
// heartbeats run if profile calls for them.
func startScriptProgress(profile hostprofile.Profile, token []byte, label string, withMessage bool, push func([]byte)) *scriptProgress {
	now := time.Now()
	sp := &scriptProgress{push: push, withMessage: withMessage, token: token, label: label, lastSent: now, lastNews: now}
	if profile.ResetOnProgress && profile.Timeout > 0 {
		sp.every = max(profile.Timeout/3, 50*time.Millisecond)
		// beat reads sp.t under the lock: it may fire before this returns.
		sp.mu.Lock()
		sp.t = time.AfterFunc(sp.every, sp.beat)
		sp.mu.Unlock()
	}
	return sp
}

// progress sends the script's own progress.
func (sp *scriptProgress) progress(value float64, total *float64, message string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.stopped {
		return
	}
	if sp.any && value <= sp.sent {
		value = math.Nextafter(sp.sent, math.Inf(1))
	}
	sp.lastNews = time.Now()
	sp.sendLocked(value, total, message)
}

func (sp *scriptProgress) beat() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.stopped {
		return
	}
	now := time.Now()
	if due := sp.lastSent.Add(sp.every); now.Before(due) {
		sp.t.Reset(due.Sub(now))
		return
	}
	v := 0.0
	if sp.any {
		v = math.Nextafter(sp.sent, math.Inf(1))
	}
	secs := strconv.FormatFloat(now.Sub(sp.lastNews).Seconds(), 'f', 1, 64)
	sp.sendLocked(v, nil, "waiting on script "+sp.label+": no progress for "+secs+" s")
	sp.t.Reset(sp.every)
}

func (sp *scriptProgress) sendLocked(value float64, total *float64, message string) {
	p := &jsonrpc.Object{}
	p.Set(mcp.MetaProgressToken, sp.token)
	p.Set("progress", strconv.AppendFloat(nil, value, 'g', -1, 64))
	if total != nil {
		p.Set("total", strconv.AppendFloat(nil, *total, 'g', -1, 64))
	}
	if message != "" && sp.withMessage {
		p.Set("message", jsonrpc.MustMarshal(message))
	}
	sp.sent, sp.any, sp.lastSent = value, true, time.Now()
	sp.push(p.Bytes())
}

// stop ends the heartbeats and the progress: nothing is sent after it.
func (sp *scriptProgress) stop() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.stopped = true
	if sp.t != nil {
		sp.t.Stop()
	}
}
