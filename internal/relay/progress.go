package relay

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// callState is what one call tracks of its progress.
type callState struct {
	call  *Call
	entry *Entry
	idle  time.Duration
	timer *callTimer // the call's idle timer (and hard maximum)
	obs   Observer   // nil: nobody listens

	// What a Live call holds, here so that it takes one allocation:
	// call points to c, timer to ct (a resumed call's are its own).
	c    Call
	ct   callTimer
	asks asks
	slot slot
	q    questionCtx
	live Live
	hb   *heartbeat // guarded by mu; nil: no heartbeats

	mu     sync.Mutex // progress arrives on the reader goroutine; pauses on question goroutines
	last   float64
	n      int
	paused bool // a question waits for the host: the idle timer is stopped
}

// pauseIdle stops the idle timer while the host is asked something, and
// restarts it, for a full interval, once no question waits.
func (st *callState) pauseIdle(paused bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.paused = paused
	if st.timer == nil {
		return
	}
	if paused {
		st.timer.stopIdle()
	} else {
		st.timer.startIdle(st.idle)
	}
}

// onProgress is onProgressObject for raw params.
func (st *callState) onProgress(params json.RawMessage) {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return
	}
	st.onProgressObject(obj)
}

// onProgressObject runs on the upstream reader goroutine for each progress
// notification of the call, in wire order, with its params parsed (and
// then its own to edit). Every notification shows the upstream is alive
// and resets the idle timer; only those whose value increases go on to
// the host (the spec's MUST), so a heartbeat that repeats its value keeps
// the call alive without breaking the host's ordering.
func (st *callState) onProgressObject(obj *jsonrpc.Object) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.timer != nil && !st.paused {
		st.timer.touch()
	}
	st.newsLocked()
	// The value as the host reads it: the member named exactly "progress"
	// (encoding/json would also take "Progress"), a number. Without one
	// the notification is malformed: it shows the upstream is alive, but
	// is not passed on.
	value, ok := progressValue(obj)
	if !ok || st.n > 0 && value <= st.last {
		return
	}
	st.last = value
	st.n++
	if st.entry != nil {
		total, message := progressStatus(obj)
		st.entry.update(value, total, message)
	}
	if st.obs != nil {
		st.obs.ProgressAdvanced(CallInfo{ID: callID(st.entry), Server: st.call.Server, Tool: st.call.Tool, Host: st.call.Host})
	}
	if st.call.HostToken == nil || st.call.Progress == nil {
		return
	}
	st.forwardLocked(obj, value)
	obj.Set(mcp.MetaProgressToken, st.call.HostToken)
	st.call.Progress(obj.Bytes())
}

// progressValue returns the number in params' "progress" member.
func progressValue(params *jsonrpc.Object) (float64, bool) {
	raw, ok := params.Get("progress")
	if !ok || len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false // absent, or not a number (null would read as 0)
	}
	return jsonrpc.ParseNumber(raw)
}

// progressStatus returns a progress notification's total and message, for
// status, as decoding it into mcp.ProgressParams reads them: directly when
// each is absent, null or one member of its type; through encoding/json
// when anything is unusual (a duplicate, a wrong type, a name differing
// only in case, which encoding/json would also read).
func progressStatus(params *jsonrpc.Object) (total *float64, message string) {
	var rawTotal, rawMessage json.RawMessage
	nTotal, nMessage, odd := 0, 0, false
	for k, v := range params.Members() {
		switch {
		case k == "total":
			nTotal++
			rawTotal = v
		case k == "message":
			nMessage++
			rawMessage = v
		case strings.EqualFold(k, "total") || strings.EqualFold(k, "message"):
			odd = true
		}
	}
	if !odd && nTotal <= 1 && nMessage <= 1 {
		ok := true
		if rawTotal != nil && string(rawTotal) != "null" {
			v, good := jsonrpc.ParseNumber(rawTotal)
			total, ok = &v, good
		}
		if rawMessage != nil && string(rawMessage) != "null" {
			s, good := jsonrpc.Unquote(rawMessage)
			message, ok = s, ok && good
		}
		if ok {
			return total, message
		}
	}
	var p mcp.ProgressParams
	_ = json.Unmarshal(params.Bytes(), &p)
	return p.Total, p.Message
}
