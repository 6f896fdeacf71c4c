package hostjobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// The job meta-tools, mcpx_job and mcpx_job_cancel, served to a host
// (hostserver registers them among its meta-tools); what they answer is
// worded in answer.go.

// Job serves mcpx_job: the host's job, waited on a while.
func Job(ctx context.Context, r Request, a Asking) {
	var args struct {
		JobID string   `json:"job_id"`
		Wait  *float64 `json:"wait_seconds"`
	}
	raw, _ := r.Params().Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || args.JobID == "" {
		r.ReplyToolError("mcpx_job needs the job_id a tool call returned")
		return
	}
	_, hasToken := mcp.Meta(r.Params()).Get(mcp.MetaProgressToken)
	window := AnswerWindow(Timer(r.HostProfile(), hasToken))
	wait := min(30*time.Second, window)
	if args.Wait != nil {
		wait = min(time.Duration(max(*args.Wait, 0)*float64(time.Second)), window)
	}
	var j *store.Job
	err := a.MayRead(ctx, principal.ReadJob, args.JobID)
	if err == nil {
		j, err = a.Jobs.Wait(ctx, a.Owner, args.JobID, wait)
	}
	if err != nil {
		if ctx.Err() != nil {
			r.End(context.Cause(ctx))
			return
		}
		r.ReplyToolError("mcpx_job: " + err.Error())
		return
	}
	replyJob(r, j, window)
}

// replyJob answers with a job's state, or the tool's own result once it
// completed.
func replyJob(r Request, j *store.Job, window time.Duration) {
	st := State{JobID: j.ID, Status: j.Status, Error: j.Error, Note: j.Note}
	if len(j.Progress) > 0 {
		var p jobs.Progress
		if json.Unmarshal(j.Progress, &p) == nil {
			st.Progress = &p
		}
	}
	switch j.Status {
	case store.Completed:
		r.Reply(r.ToolResult(j.Result))
		return
	case store.Running:
		res := Running(j.ID, j.Tool, time.Since(j.Created), window, st.Progress)
		res.StructuredContent.Note = j.Note
		r.ReplyJSON(res)
		return
	}
	text := fmt.Sprintf("Job %s (%s) is %s: %s", j.ID, j.Tool, j.Status, j.Error)
	if j.Note != "" {
		text += " (" + j.Note + ")"
	}
	if j.Late != nil {
		st.Late = &LateEnd{Status: j.Late.Status, Result: j.Late.Result, Error: j.Late.Error}
		text += LateText(j.Late)
	}
	r.ReplyJSON(Result{Content: []TextContent{{Type: "text", Text: text}}, StructuredContent: st, IsError: true})
}

// JobCancel serves mcpx_job_cancel.
func JobCancel(ctx context.Context, r Request, a Asking) {
	var args struct {
		JobID string `json:"job_id"`
	}
	raw, _ := r.Params().Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || args.JobID == "" {
		r.ReplyToolError("mcpx_job_cancel needs a job_id")
		return
	}
	var j *store.Job
	err := a.MayRead(ctx, principal.CancelJob, args.JobID)
	if err == nil {
		j, err = a.Cancel(ctx, args.JobID, "mcpx_job_cancel")
	}
	if err != nil {
		r.ReplyToolError("mcpx_job_cancel: " + err.Error())
		return
	}
	text := fmt.Sprintf("Job %s (%s) is %s.", j.ID, j.Tool, j.Status)
	if j.Error != "" {
		text = fmt.Sprintf("Job %s (%s) is %s: %s.", j.ID, j.Tool, j.Status, j.Error)
	}
	r.ReplyJSON(Result{Content: []TextContent{{Type: "text", Text: text}}, StructuredContent: State{JobID: j.ID, Status: j.Status, Error: j.Error}})
}
