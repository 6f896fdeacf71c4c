package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/jsonrpc"
)

// Observer is told of the tool calls the relay runs, for metrics and the
// live view. Observers own nothing and change nothing: their methods are
// called on the call's goroutine (ProgressAdvanced on the upstream's
// reader goroutine, in wire order), must not block and must not call
// back into the relay. With no observer set, the relay pays one nil check
// per event.
type Observer interface {
	// CallStarted is told of a tool call as the relay takes it.
	CallStarted(c CallInfo)
	// CallEnded is told once per CallStarted, when the call returns to
	// its host, with how it ended, how long it took, and its error (a
	// *Cause for a call someone gave up on).
	CallEnded(c CallInfo, outcome Outcome, took time.Duration, err error)
	// ProgressAdvanced is told of each progress notification of a call
	// whose value advanced (the ones passed on to a host that asked).
	ProgressAdvanced(c CallInfo)
	// QueueWaited is told of a call that waited in its upstream's queue
	// for a call slot, once it left the queue, admitted or not.
	QueueWaited(server string, waited time.Duration, admitted bool)
}

// CallInfo names one observed call.
type CallInfo struct {
	ID     uint64 // the registry id (mcpx status's #id); 0 for a call with no entry
	Server string
	Tool   string
	Host   string // the host session
}

// Outcome is how a tool call ended, as metrics label it.
type Outcome string

const (
	OutcomeOK        Outcome = "ok"         // a result
	OutcomeToolError Outcome = "tool_error" // a result with isError true
	OutcomeError     Outcome = "error"      // a JSON-RPC error from the upstream
	OutcomeBusy      Outcome = "busy"       // no call slot (a *BusyError)
	OutcomeTimeout   Outcome = "timeout"    // the idle timer or the hard maximum ended it
	OutcomeCancelled Outcome = "cancelled"  // the host, a person or mcpx gave up on it
	OutcomeFailed    Outcome = "failed"     // the upstream could not be reached, or died
)

// SetObserver makes o the relay's observer. It is called before the
// relay serves any call (the daemon wires it), once.
func (r *Relay) SetObserver(o Observer) {
	if o == nil {
		return
	}
	r.obs = o
	r.lim.onWait = o.QueueWaited
}

// OutcomeOf classifies how a call ended from its result and error.
func OutcomeOf(res []byte, err error) Outcome {
	if err == nil {
		if isErrorResult(res) {
			return OutcomeToolError
		}
		return OutcomeOK
	}
	if c, ok := CauseOf(err); ok {
		if c.Kind == IdleTimeout || c.Kind == HardTimeout {
			return OutcomeTimeout
		}
		return OutcomeCancelled
	}
	var busy *BusyError
	if errors.As(err, &busy) {
		return OutcomeBusy
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return OutcomeError
	}
	return OutcomeFailed
}

// isErrorResult reports whether a tools/call result has isError true. It
// looks for the member's bytes first: most results have none, and are
// not parsed.
func isErrorResult(res []byte) bool {
	if !bytes.Contains(res, []byte(`"isError"`)) {
		return false
	}
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return false
	}
	v, ok := obj.Get("isError")
	return ok && string(v) == "true"
}

// observation is one observed call under way (CallTool's).
type observation struct {
	info    CallInfo
	start   time.Time
	endSpan func(Outcome, error) // nil without a tracer
	audited bool                 // rec is kept: the relay has an audit log
	rec     audit.Record
	hook    DeadlineHook // the call's, which may name what the call became
}

// begin observes a call as it starts (and starts its span, with a
// tracer). CallTool calls begin and end only when an observer listens, a
// tracer traces or the log takes debug lines: one line as the
// call starts (in round: "call sent upstream") and one as it ends, both
// with its call id, as the host face's lines for the same call have it.
func (r *Relay) begin(e *Entry, c *Call) observation {
	o := observation{info: CallInfo{ID: callID(e), Server: c.Server, Tool: c.Tool, Host: c.Host}, start: time.Now()}
	if r.tracer != nil {
		o.endSpan = r.startSpan(c, o.info)
	}
	if r.obs != nil {
		r.obs.CallStarted(o.info)
	}
	if r.audit != nil {
		o.audited, o.rec, o.hook = true, callRecord(c), c.OnDeadline
	}
	return o
}

// end observes a call as it ends.
func (r *Relay) end(o *observation, res json.RawMessage, err error) {
	outcome := OutcomeOf(res, err)
	took := time.Since(o.start)
	if r.obs != nil {
		r.obs.CallEnded(o.info, outcome, took, err)
	}
	if o.endSpan != nil {
		o.endSpan(outcome, err)
	}
	if o.audited {
		r.recordCall(&o.rec, o.hook, outcome, took, err)
	}
	if r.log.Enabled(context.Background(), slog.LevelDebug) {
		args := []any{"callId", o.info.ID, "server", o.info.Server, "tool", o.info.Tool, "outcome", string(outcome), "took", took}
		if err != nil {
			args = append(args, "err", err.Error())
		}
		r.log.Debug("call ended", args...)
	}
}

// callID is e's registry id, the call id of log lines; 0 for none.
func callID(e *Entry) uint64 {
	if e == nil {
		return 0
	}
	return e.ID
}
