package hostserver

import (
	"context"
	"encoding/json"
	"time"

	"mcpx/internal/codemode"
	"mcpx/internal/jobs"
	"mcpx/internal/relay"
)

// scriptJobTool names a script's jobs (they have no server): mcpx_job and
// mcpx jobs show it as the tool.
const scriptJobTool = "mcpx_exec"

// scriptKey is the job key of a script: its code and timeout, whether or
// not it was asked to run in the background (a retry attaches either way).
func scriptKey(code string, timeoutSeconds float64) string {
	args, _ := json.Marshal(map[string]any{"code": code, "timeoutSeconds": timeoutSeconds})
	return jobs.Key("", scriptJobTool, args)
}

// execCandidate runs script s, which may become a job by the rule a call
// follows (becomeCandidate): at once when background, else shortly
// before the host's hard timer (timer, 0: none) if it has not ended by
// then. A retry of a running script job's arguments by the same
// principal waits on that job. The script's progress goes to its job, and
// to the host (sp, nil: none) until the host is answered. A script job is
// never run again after a restart: it reads interrupted. It reports
// false, having done nothing, for a script that can never become a job.
func (hs *hostSession) execCandidate(ctx context.Context, req *request, s codemode.Script, key string, timer time.Duration, background bool, sp *scriptProgress, live func() bool) bool {
	var onOff func()
	if sp != nil {
		onOff = sp.stop
	}
	cd := candidate{tool: scriptJobTool, key: key, timer: timer, background: background, script: true}
	l, promoteAt, attached := hs.becomeCandidate(ctx, req, cd, nil, onOff)
	if attached {
		return true
	}
	if l == nil {
		return false
	}
	host, e := s.Progress, req.entry
	s.Progress = func(value float64, total *float64, message string) {
		if e != nil {
			e.Note(relay.Progress{Value: value, Total: total, Message: message}) // its job's once it is one
		}
		if host != nil {
			host(value, total, message) // nothing once the host is answered
		}
	}
	if !promoteAt.IsZero() {
		// A script has no call timer to ride on.
		t := time.AfterFunc(time.Until(promoteAt), l.DeadlineReached)
		defer t.Stop()
	}
	res, err := hs.srv.opts.Scripts.Run(ctx, s)
	if sp != nil {
		sp.stop() // nothing after the answer
	}
	if l.End(res, err) {
		return true
	}
	hs.answerCall(req, live, res, err, "")
	return true
}
