package hostserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// The job meta-tools, listed when the server keeps jobs.
var (
	jobToolJSON       = []byte(`{"name":"mcpx_job","title":"Check a job","description":"Read a job that a long tool call became: its status, its last progress, and the tool's result once it is done. Waits up to wait_seconds for it to finish.","inputSchema":{"type":"object","properties":{"job_id":{"type":"string","description":"The job_id the tool call returned."},"wait_seconds":{"type":"number","minimum":0,"description":"Wait up to this long for the job to finish (mcpx never waits past your own timeout)."}},"required":["job_id"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	jobCancelToolJSON = []byte(`{"name":"mcpx_job_cancel","title":"Cancel a job","description":"Cancel a running job: the tool call it is gets cancelled at its server.","inputSchema":{"type":"object","properties":{"job_id":{"type":"string","description":"The job_id to cancel."}},"required":["job_id"]},"annotations":{"destructiveHint":true,"openWorldHint":false}}`)
)

// jobState is a job's structuredContent.
type jobState struct {
	JobID            string         `json:"job_id"`
	Status           store.Status   `json:"status"`
	PollAfterSeconds int            `json:"poll_after_seconds,omitempty"`
	Progress         *jobs.Progress `json:"progress"`
	Error            string         `json:"error,omitempty"`
	Note             string         `json:"note,omitempty"`
	// Late is the end of an earlier attempt that came after another
	// mcpx had taken the job (its note says so).
	Late *lateEnd `json:"late,omitempty"`
}

// lateEnd is a job's late end as a host reads it.
type lateEnd struct {
	Status store.Status    `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// lateText is what a job's late end says, for its text: the text of its
// result's content, or its error.
func lateText(l *store.Late) string {
	var r struct {
		Content []textContent `json:"content"`
	}
	_ = json.Unmarshal(l.Result, &r)
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	if len(texts) == 0 && l.Error != "" {
		texts = append(texts, l.Error)
	}
	return fmt.Sprintf(" Its late result (%s): %s", l.Status, strings.Join(texts, "\n"))
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type jobResult struct {
	Content           []textContent `json:"content"`
	StructuredContent jobState      `json:"structuredContent"`
	IsError           bool          `json:"isError,omitempty"`
}

// pollAfter is when a model should look again at a job that has run for
// elapsed: soon at first, then about a tenth of the time so far, within
// what the host lets mcpx_job wait.
func pollAfter(elapsed, window time.Duration) int {
	s := int(math.Ceil((elapsed / 10).Seconds()))
	s = max(s, 2)
	if w := int(window.Seconds()); w >= 1 {
		s = min(s, w)
	}
	return min(s, 300)
}

// runningResult is the tool result a host gets for a call that goes on as
// a job: words a model follows, and the job's state.
func runningResult(id, tool string, elapsed, window time.Duration, p *jobs.Progress) jobResult {
	poll := pollAfter(elapsed, window)
	var b strings.Builder
	fmt.Fprintf(&b, "The tool %s is still working (%s so far), so mcpx keeps it running as job %s; its result will be kept for you. ", tool, relay.FormatDuration(elapsed.Round(time.Second)), id)
	if p != nil {
		b.WriteString("Last progress: " + progressText(p) + ". ")
	}
	fmt.Fprintf(&b, "In about %d seconds, call mcpx_job with {\"job_id\": %q, \"wait_seconds\": %d} to get the result. ", poll, id, int(window.Seconds()))
	fmt.Fprintf(&b, "Do not call %s again for this: a repeated call only waits on the same job. mcpx_job_cancel stops it.", tool)
	return jobResult{
		Content:           []textContent{{Type: "text", Text: b.String()}},
		StructuredContent: jobState{JobID: id, Status: store.Running, PollAfterSeconds: poll, Progress: p},
	}
}

func progressText(p *jobs.Progress) string {
	s := fmt.Sprintf("%g", p.Progress)
	if p.Total != nil {
		s += fmt.Sprintf(" of %g", *p.Total)
	}
	if p.Message != "" {
		s += " (" + p.Message + ")"
	}
	return s
}

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
	window := answerWindow(jobTimer(hs.hostProfile(req), hasToken))
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
	st := jobState{JobID: j.ID, Status: j.Status, Error: j.Error, Note: j.Note}
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
		r := runningResult(j.ID, j.Tool, time.Since(j.Created), window, st.Progress)
		r.StructuredContent.Note = j.Note
		hs.replyJSON(req, r)
		return
	}
	text := fmt.Sprintf("Job %s (%s) is %s: %s", j.ID, j.Tool, j.Status, j.Error)
	if j.Note != "" {
		text += " (" + j.Note + ")"
	}
	if j.Late != nil {
		st.Late = &lateEnd{Status: j.Late.Status, Result: j.Late.Result, Error: j.Late.Error}
		text += lateText(j.Late)
	}
	hs.replyJSON(req, jobResult{Content: []textContent{{Type: "text", Text: text}}, StructuredContent: st, IsError: true})
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
	hs.replyJSON(req, jobResult{Content: []textContent{{Type: "text", Text: text}}, StructuredContent: jobState{JobID: j.ID, Status: j.Status, Error: j.Error}})
}

// JobTools returns mcpx_job and mcpx_job_cancel as hosts see them, nil
// when the server keeps no jobs: the local API lists them for its own
// clients, which serve them through its job routes.
func (s *Server) JobTools() []json.RawMessage {
	if s.opts.Jobs == nil {
		return nil
	}
	return []json.RawMessage{jobToolJSON, jobCancelToolJSON}
}
