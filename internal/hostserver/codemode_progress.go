package hostserver

import (
	"math"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// scriptProgress sends a script's progress to its host under the
// request's token, and, for a host whose timer progress resets, a
// heartbeat whenever the host has been sent nothing for a third of that
// timer, as the relay does for a call whose server is silent (the same
// relay.Heartbeat): its value the smallest above the last one sent (a
// progress bar does not move), its message naming the script. A value of
// the script's own that is not above a heartbeat's goes as the smallest
// above it, so the host's values always increase. Nothing is sent after
// stop returns.
type scriptProgress struct {
	push        func(params []byte)
	withMessage bool
	token       []byte
	label       string

	mu      sync.Mutex
	hb      *relay.Heartbeat // nil: no heartbeats
	sent    float64
	any     bool
	stopped bool
}

// startScriptProgress returns the progress sender of one script; its
// heartbeats run if profile calls for them.
func startScriptProgress(profile hostprofile.Profile, token []byte, label string, withMessage bool, push func([]byte)) *scriptProgress {
	sp := &scriptProgress{push: push, withMessage: withMessage, token: token, label: label}
	if profile.ResetOnProgress && profile.Timeout > 0 {
		// beat reads sp.hb under the lock: it may fire before this returns.
		sp.mu.Lock()
		sp.hb = relay.NewHeartbeat(relay.HeartbeatInterval(profile.Timeout), time.Now(), sp.beat)
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
	if sp.hb != nil {
		sp.hb.News(time.Now())
		value = sp.hb.Forward(value)
	} else if sp.any && value <= sp.sent {
		value = math.Nextafter(sp.sent, math.Inf(1))
	}
	sp.sendLocked(value, total, message)
}

func (sp *scriptProgress) beat() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	v, silent, ok := sp.hb.Due()
	if !ok {
		return
	}
	sp.sendLocked(v, nil, "waiting on script "+sp.label+": no progress for "+relay.Seconds(silent))
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
	sp.sent, sp.any = value, true
	sp.push(p.Bytes())
}

// stop ends the heartbeats and the progress: nothing is sent after it.
func (sp *scriptProgress) stop() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.stopped = true
	if sp.hb != nil {
		sp.hb.Stop()
	}
}
