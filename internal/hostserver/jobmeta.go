package hostserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// The job meta-tools, mcpx_job and mcpx_job_cancel, served to a host;
// what they answer is worded in hostjobs (answer.go).

// metaJob serves mcpx_job.
func (hs *hostSession) metaJob(ctx context.Context, req *request) {
	var args struct {
		JobID string   `json:"job_id"`
		Wait  *float64 `json:"wait_seconds"`
	}
	raw, _ := req.params.Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || args.JobID == "" {
		hs.replyToolError(req, "mcpx_job needs the job_id a tool call returned")
		return
	}
	_, hasToken := mcp.Meta(req.params).Get(mcp.MetaProgressToken)
	window := hostjobs.AnswerWindow(hostjobs.Timer(hs.hostProfile(req), hasToken))
	wait := min(30*time.Second, window)
	if args.Wait != nil {
		wait = min(time.Duration(max(*args.Wait, 0)*float64(time.Second)), window)
	}
	var j *store.Job
	err := hs.mayReadJob(ctx, req, principal.ReadJob, args.JobID)
	if err == nil {
		j, err = hs.srv.opts.Jobs.Wait(ctx, hs.jobPrincipal(), args.JobID, wait)
	}
	if err != nil {
		if ctx.Err() != nil {
			hs.end(req, context.Cause(ctx))
			return
		}
		hs.replyToolError(req, "mcpx_job: "+err.Error())
		return
	}
	hs.replyJob(req, j, window)
}

// replyJob answers with a job's state, or the tool's own result once it
// completed.
func (hs *hostSession) replyJob(req *request, j *store.Job, window time.Duration) {
	st := hostjobs.State{JobID: j.ID, Status: j.Status, Error: j.Error, Note: j.Note}
	if len(j.Progress) > 0 {
		var p jobs.Progress
		if json.Unmarshal(j.Progress, &p) == nil {
			st.Progress = &p
		}
	}
	switch j.Status {
	case store.Completed:
		reply(req.sink, req.msg.ID, hs.toolResult(req, j.Result))
		return
	case store.Running:
		r := hostjobs.Running(j.ID, j.Tool, time.Since(j.Created), window, st.Progress)
		r.StructuredContent.Note = j.Note
		hs.replyJSON(req, r)
		return
	}
	text := fmt.Sprintf("Job %s (%s) is %s: %s", j.ID, j.Tool, j.Status, j.Error)
	if j.Note != "" {
		text += " (" + j.Note + ")"
	}
	if j.Late != nil {
		st.Late = &hostjobs.LateEnd{Status: j.Late.Status, Result: j.Late.Result, Error: j.Late.Error}
		text += hostjobs.LateText(j.Late)
	}
	hs.replyJSON(req, hostjobs.Result{Content: []hostjobs.TextContent{{Type: "text", Text: text}}, StructuredContent: st, IsError: true})
}

// metaJobCancel serves mcpx_job_cancel.
func (hs *hostSession) metaJobCancel(ctx context.Context, req *request) {
	var args struct {
		JobID string `json:"job_id"`
	}
	raw, _ := req.params.Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || args.JobID == "" {
		hs.replyToolError(req, "mcpx_job_cancel needs a job_id")
		return
	}
	var j *store.Job
	err := hs.mayReadJob(ctx, req, principal.CancelJob, args.JobID)
	if err == nil {
		j, err = hs.srv.opts.Jobs.CancelJob(ctx, hs.jobPrincipal(), args.JobID, hs.who.WithClient(clientName(hs, req)), "mcpx_job_cancel")
	}
	if err != nil {
		hs.replyToolError(req, "mcpx_job_cancel: "+err.Error())
		return
	}
	text := fmt.Sprintf("Job %s (%s) is %s.", j.ID, j.Tool, j.Status)
	if j.Error != "" {
		text = fmt.Sprintf("Job %s (%s) is %s: %s.", j.ID, j.Tool, j.Status, j.Error)
	}
	hs.replyJSON(req, hostjobs.Result{Content: []hostjobs.TextContent{{Type: "text", Text: text}}, StructuredContent: hostjobs.State{JobID: j.ID, Status: j.Status, Error: j.Error}})
}

// JobTools returns mcpx_job and mcpx_job_cancel as hosts see them, nil
// when the server keeps no jobs: the local API lists them for its own
// clients, which serve them through its job routes.
func (s *Server) JobTools() []json.RawMessage {
	if s.opts.Jobs == nil {
		return nil
	}
	return []json.RawMessage{hostjobs.JobTool, hostjobs.JobCancelTool}
}
