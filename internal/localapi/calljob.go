package localapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// serveCallJob runs a streamed call that becomes a job once it has run
// req.JobAfterMs (from its start, or its last progress with
// JobResetOnProgress): the client's own timer would end it. Until then it
// is a call like any: closing the stream cancels it. Then the stream
// ends with a "job" event and the call goes on as a job of the caller's
// principal, as POST PathV1Jobs starts them.
func (h *Handler) serveCallJob(w http.ResponseWriter, r *http.Request, m *jobs.Manager, req apitype.CallRequest, server, tool string, params *jsonrpc.Object) error {
	// The relay edits params as it runs: the job keeps a copy made now.
	kept := params.Bytes()
	who := principal.From(r.Context())
	spec := jobs.Spec{
		Principal: who.ID(), Server: server, Tool: tool, Params: kept, Who: who,
		Key: jobs.Key(server, tool, req.Arguments),
		Describe: func(sp *jobs.Spec) {
			sp.Idempotent = jobs.Idempotent(context.WithoutCancel(r.Context()), h.relay, server, tool)
		},
	}
	// The registry's cancel (POST PathV1Cancel) reaches the call through
	// ctx until the call is a job and has left the registry.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	entry, call, st, err := h.apiCall(who, req, server, tool, params, cancel)
	if err != nil {
		return err
	}
	defer h.relay.Registry().Remove(entry)
	jc, err := m.Start(context.WithoutCancel(r.Context()), spec, jobs.Later(func(jctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		toJob := jobs.ProgressTo(c)
		call.Progress = func(p json.RawMessage) { st.set(p); toJob(p) }
		call.Cancel = c.CancelFunc()
		return h.relay.CallTool(jctx, entry, call)
	}))
	if err != nil {
		return err
	}
	stopReg := context.AfterFunc(ctx, func() { jc.CancelUnlessJob(context.Cause(ctx)) })
	defer stopReg()
	gone := &relay.Cause{Kind: relay.ClientDisconnected, Detail: clientName(req.Client)}
	stopGone := context.AfterFunc(r.Context(), func() { jc.CancelUnlessJob(gone) })
	defer stopGone()

	emit := callEvents(w)
	emit(apitype.CallEvent{Type: "started", CallID: entry.ID, Server: server, Tool: tool})
	after := time.Duration(req.JobAfterMs) * time.Millisecond
	timer := time.NewTimer(after)
	defer timer.Stop()
	for {
		select {
		case <-st.wake:
			if st.send(emit) && req.JobResetOnProgress {
				timer.Reset(after)
			}
		case <-jc.Done():
			h.relay.Registry().Remove(entry)
			st.send(emit)
			res, err := jc.Result()
			emit(finalEvent(res, err, server))
			return nil
		case <-timer.C:
			if r.Context().Err() != nil {
				continue // the client has gone: its cancel ends the call
			}
			id, ok, err := jc.Promote(context.WithoutCancel(r.Context()))
			if err != nil {
				// Not kept: the call goes on as a plain one, which the
				// client may still wait for or cancel.
				h.log.Warn("a streamed call could not become a job", "callId", entry.ID, "err", err)
				continue
			}
			if !ok {
				continue // it has ended: Done has its result
			}
			h.relay.Registry().Remove(entry)
			st.send(emit)
			j, err := m.Get(r.Context(), who.ID(), id)
			if err != nil {
				return jobError(err)
			}
			wj := wireJob(j)
			wj.Progress = h.jobProgress(j)
			emit(apitype.CallEvent{Type: "job", Job: &wj})
			return nil
		}
	}
}
