package hostjobs

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// JobTool and JobCancelTool are the job meta-tools, mcpx_job and
// mcpx_job_cancel, listed when the server keeps jobs.
var (
	JobTool       = []byte(`{"name":"mcpx_job","title":"Check a job","description":"Read a job that a long tool call became: its status, its last progress, and the tool's result once it is done. Waits up to wait_seconds for it to finish.","inputSchema":{"type":"object","properties":{"job_id":{"type":"string","description":"The job_id the tool call returned."},"wait_seconds":{"type":"number","minimum":0,"description":"Wait up to this long for the job to finish (mcpx never waits past your own timeout)."}},"required":["job_id"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	JobCancelTool = []byte(`{"name":"mcpx_job_cancel","title":"Cancel a job","description":"Cancel a running job: the tool call it is gets cancelled at its server.","inputSchema":{"type":"object","properties":{"job_id":{"type":"string","description":"The job_id to cancel."}},"required":["job_id"]},"annotations":{"destructiveHint":true,"openWorldHint":false}}`)
)

// State is a job's structuredContent, as mcpx_job answers it.
type State struct {
	JobID            string         `json:"job_id"`
	Status           store.Status   `json:"status"`
	PollAfterSeconds int            `json:"poll_after_seconds,omitempty"`
	Progress         *jobs.Progress `json:"progress"`
	Error            string         `json:"error,omitempty"`
	Note             string         `json:"note,omitempty"`
	// Late is the end of an earlier attempt that came after another
	// mcpx had taken the job (its note says so).
	Late *LateEnd `json:"late,omitempty"`
}

// LateEnd is a job's late end as a host reads it.
type LateEnd struct {
	Status store.Status    `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// LateText is what a job's late end says, for its text: the text of its
// result's content, or its error.
func LateText(l *store.Late) string {
	var r struct {
		Content []TextContent `json:"content"`
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

// TextContent is a tool result's text content.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Result is a tool result about a job: words a model follows, and the
// job's state.
type Result struct {
	Content           []TextContent `json:"content"`
	StructuredContent State         `json:"structuredContent"`
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

// Running is the tool result a host gets for a call that goes on as
// a job: words a model follows, and the job's state.
func Running(id, tool string, elapsed, window time.Duration, p *jobs.Progress) Result {
	poll := pollAfter(elapsed, window)
	var b strings.Builder
	fmt.Fprintf(&b, "The tool %s is still working (%s so far), so mcpx keeps it running as job %s; its result will be kept for you. ", tool, relay.FormatDuration(elapsed.Round(time.Second)), id)
	if p != nil {
		b.WriteString("Last progress: " + ProgressText(p) + ". ")
	}
	fmt.Fprintf(&b, "In about %d seconds, call mcpx_job with {\"job_id\": %q, \"wait_seconds\": %d} to get the result. ", poll, id, int(window.Seconds()))
	fmt.Fprintf(&b, "Do not call %s again for this: a repeated call only waits on the same job. mcpx_job_cancel stops it.", tool)
	return Result{
		Content:           []TextContent{{Type: "text", Text: b.String()}},
		StructuredContent: State{JobID: id, Status: store.Running, PollAfterSeconds: poll, Progress: p},
	}
}

// ProgressText is a job's progress as words.
func ProgressText(p *jobs.Progress) string {
	s := fmt.Sprintf("%g", p.Progress)
	if p.Total != nil {
		s += fmt.Sprintf(" of %g", *p.Total)
	}
	if p.Message != "" {
		s += " (" + p.Message + ")"
	}
	return s
}

// ToolError is a tool result reporting a failure to the model.
func ToolError(text string) any {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	return struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError"`
	}{[]content{{"text", text}}, true}
}
