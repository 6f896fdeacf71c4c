package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/codemode"
	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

// serveExec runs one script and streams its events as NDJSON, as
// serveCall streams a call's: its progress() calls are the progress, and
// a cancel of its call id (Ctrl-C) or the client leaving stops it.
func (h *Handler) serveExec(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Scripts == nil {
		return statusErr(http.StatusNotFound, errors.New("this daemon runs no scripts"))
	}
	var req apitype.ExecRequest
	if err := decodeBody(r, &req); err != nil {
		return statusErr(http.StatusBadRequest, fmt.Errorf("reading exec request: %w", err))
	}
	if strings.TrimSpace(req.Code) == "" {
		return statusErr(http.StatusBadRequest, errors.New("the script is empty"))
	}
	pol := h.policy(r)
	if req.Background {
		return h.startScriptJob(w, r, pol, req)
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	stop := context.AfterFunc(r.Context(), func() { cancel(&relay.Cause{Kind: relay.ClientDisconnected, Detail: clientName(req.Client)}) })
	defer stop()
	client := "cli-" + strconv.FormatUint(apiClients.Add(1), 10)
	entry, err := h.relay.Registry().AddFor(pol.Who().ID(), relay.HostKey{Session: client, ID: "1"}, "mcpx/exec", cancel, 0)
	if err != nil {
		return err
	}
	defer h.relay.Registry().Remove(entry)

	st := &progressSlot{wake: make(chan struct{}, 1)}
	s := codemode.Script{
		Code: req.Code, Timeout: time.Duration(req.TimeoutMs) * time.Millisecond,
		Name: client, Host: client,
		Progress: func(value float64, total *float64, message string) {
			st.set(mustJSON(map[string]any{"progress": value, "total": total, "message": message}))
		},
		Allow: scriptAllow(pol), Who: pol.Who(),
	}
	type outcome struct {
		out *codemode.Outcome
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		out, err := h.opts.Scripts.Exec(ctx, s)
		done <- outcome{out, err}
	}()
	streamEvents(w, h.relay.Registry(), entry, st, apitype.CallEvent{Type: "started", CallID: entry.ID}, done, func(emit func(apitype.CallEvent), o outcome) {
		var stopped *codemode.StopError
		switch {
		case o.err != nil:
			emit(finalEvent(nil, o.err, ""))
		case errors.As(o.out.Err, &stopped):
			emit(finalEvent(nil, stopped, "")) // its timeouts: as a call's
		default:
			emit(finalEvent(codemode.ToolResult(o.out), nil, ""))
		}
	})
	return nil
}

// scriptAllow is what a script of pol's principal may call and find:
// what the principal may (nil: everything).
func scriptAllow(pol principal.Policy) func(server, tool string) error {
	if f, _ := pol.Tools(); f == nil {
		return nil
	}
	return func(server, tool string) error {
		return pol.Decide(principal.CallTool, principal.Target{Server: server, Tool: tool})
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// startScriptJob starts a script as a job of pol's principal and answers
// with the job; a running job of the same script is answered instead.
func (h *Handler) startScriptJob(w http.ResponseWriter, r *http.Request, pol principal.Policy, req apitype.ExecRequest) error {
	m, err := h.jobs()
	if err != nil {
		return err
	}
	if err := startRefusal(pol, "mcpx_exec", "", "mcpx_exec"); err != nil {
		return err
	}
	key := jobs.Key("", "mcpx_exec", mustJSON(map[string]any{"code": req.Code, "timeoutMs": req.TimeoutMs}))
	id := ""
	owner := pol.Who().ID()
	if c := m.Attach(owner, key); c != nil {
		id = c.ID()
	} else {
		name := "cli-" + strconv.FormatUint(apiClients.Add(1), 10)
		// Its params say which tool filter it ran under (jobs.Target).
		spec := jobs.Spec{Principal: owner, Tool: "mcpx_exec", Key: key, Params: jobs.ScriptParams(pol), Who: pol.Who()}
		c, err := m.Start(context.WithoutCancel(r.Context()), spec, jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
			return h.opts.Scripts.Run(ctx, codemode.Script{
				Code: req.Code, Timeout: time.Duration(req.TimeoutMs) * time.Millisecond, Name: name, Host: name, Allow: scriptAllow(pol), Who: pol.Who(),
				Progress: func(value float64, total *float64, message string) {
					c.SetProgress(jobs.Progress{Progress: value, Total: total, Message: message})
				},
			})
		}))
		if err != nil {
			return err
		}
		id = c.ID()
	}
	j, err := m.Get(r.Context(), owner, id)
	if err != nil {
		return err
	}
	return writeJSON(w, wireJob(j))
}
