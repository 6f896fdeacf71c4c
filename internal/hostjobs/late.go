package hostjobs

import (
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/store"
)

// A job with a late end (an earlier attempt's call that went on at an
// mcpx which had lost its lease, and ended after the job was taken from
// it) keeps its own status as a task: the task is what the job is. What
// the late call produced is told beside it, so that a host is not told
// the work was lost when it was done: its statusMessage says so, and an
// ended task with no result of its own carries the late end in its
// error's data, as {"late": {...}}.

// LateMessage says what j's late end is, or "" for none.
func LateMessage(j *store.Job) string {
	l := j.Late
	if l == nil {
		return ""
	}
	where := "tasks/result's error data has its result"
	if j.Status == store.Completed {
		where = "mcpx_job and mcpx jobs show have it"
	}
	return fmt.Sprintf("an earlier attempt's call went on at the mcpx that had lost its lease and ended %s at %s, after the job was taken from it (%s)",
		l.Status, l.At.UTC().Format(time.RFC3339), where)
}

// withLateMessage adds j's late end, if any, to a status message.
func withLateMessage(msg string, j *store.Job) string {
	late := LateMessage(j)
	switch {
	case late == "":
		return msg
	case msg == "":
		return late
	}
	return msg + "; " + late
}

// WithLate adds j's late end, if any, to e, an ended task's error: in its
// message, and as its data unless it has data of its own.
func WithLate(e *jsonrpc.Error, j *store.Job) *jsonrpc.Error {
	if j.Late == nil {
		return e
	}
	out := *e
	out.Message = withLateMessage(e.Message, j)
	if len(out.Data) == 0 {
		out.Data, _ = json.Marshal(struct {
			Late LateEnd `json:"late"`
		}{LateEnd{Status: j.Late.Status, Result: j.Late.Result, Error: j.Late.Error}})
	}
	return &out
}
