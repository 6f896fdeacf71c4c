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

// execAsJob runs a script that may become a job, by the rule a call
// follows (relayAsJob): at once when background, else shortly before the
// host's hard timer (timer, 0: none) if it has not ended by then. A retry
// of a running script job's arguments by the same principal waits on
// that job. The script's progress goes to its job, and to the host (sp,
// nil: none) until the host is answered. A script job is never run again
// after a restart: it reads interrupted.
func (hs *hostSession) execAsJob(ctx context.Context, req *request, s codemode.Script, key string, timer time.Duration, background bool, sp *scriptProgress) {
	m := hs.srv.opts.Jobs
	stopHost := func() {
		if sp != nil {
			sp.stop()
		}
	}
	defer stopHost()
	principal := hs.jobPrincipal()
	if c := m.Attach(principal, key); c != nil {
		stopHost()
		hs.awaitJob(ctx, req, c, timer, background)
		return
	}
	spec := jobs.Spec{Principal: principal, Tool: scriptJobTool, Key: key}
	run := func(jctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		s.Progress = func(value float64, total *float64, message string) {
			c.SetProgress(jobs.Progress{Progress: value, Total: total, Message: message})
			if sp != nil {
				sp.progress(value, total, message) // nothing once stopped
			}
		}
		return hs.srv.opts.Scripts.Run(jctx, s)
	}
	var jc *jobs.Call
	var err error
	if background {
		jc, err = m.StartJob(context.WithoutCancel(ctx), spec, run)
	} else {
		jc, err = m.Start(spec, run)
	}
	if err != nil {
		hs.replyToolError(req, "mcpx could not run this script as a job: "+err.Error())
		return
	}
	// The host's cancel reaches the script until it is a job, as for a
	// call (relayAsJob).
	if req.entry != nil {
		req.entry.Also(func(cause error) {
			if c, ok := relay.CauseOf(cause); ok && c.Kind == relay.HostCancelled {
				jc.Cancel(cause)
				return
			}
			jc.CancelUnlessJob(cause)
		})
	}
	unhook := context.AfterFunc(ctx, func() { jc.CancelUnlessJob(context.Cause(ctx)) })
	defer unhook()
	if background {
		stopHost() // its answer is the job: no progress before or after it
	}
	hs.awaitCall(ctx, req, jc, timer, background, stopHost)
}
