package hostserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// _meta keys a host may use to ask mcpx for shorter timeouts on one call.
// mcpx removes them before the call goes upstream.
const (
	MetaIdleTimeoutMs = "mcpx/idleTimeoutMs"
	MetaMaxTimeoutMs  = "mcpx/maxTimeoutMs"
)

func (hs *hostSession) toolsList(ctx context.Context, req *request) {
	if c, ok := req.params.Get("cursor"); ok && string(c) != "null" && string(c) != `""` {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown cursor"))
		return
	}
	snap := hs.srv.catalog.Snapshot(ctx)
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	buf := []byte(`{"tools":[`)
	buf = append(buf, searchToolJSON...)
	buf = append(buf, ',')
	buf = append(buf, callToolJSON...)
	if hs.srv.opts.Jobs != nil {
		buf = append(buf, ',')
		buf = append(buf, hostjobs.JobTool...)
		buf = append(buf, ',')
		buf = append(buf, hostjobs.JobCancelTool...)
	}
	if hs.srv.opts.Scripts != nil {
		buf = append(buf, ',')
		buf = append(buf, hs.execToolJSON(req)...)
		buf = append(buf, ',')
		buf = append(buf, describeToolJSON...)
	}
	tasks := !req.modern && hs.srv.legacyTasks(req.version)
	if !hs.srv.relay.CodeMode() { // code mode shows the meta-tools alone
		filter := hs.toolFilter(req)
		for _, t := range snap.Tools {
			if filter.f != nil && !filter.allows(t.Server, t.Tool) {
				continue
			}
			buf = append(buf, ',')
			if tasks {
				buf = append(buf, hostjobs.WithTaskSupport(t.Raw)...)
				continue
			}
			buf = append(buf, t.Raw...)
		}
	}
	buf = append(buf, ']')
	if req.modern {
		// 2026-07-28 list results carry cache hints. mcpx tells a host of
		// no list changes yet, so a host should not keep the list; and it
		// is this user's gateway.
		buf = append(buf, `,"ttlMs":0,"cacheScope":"private"`...)
	}
	buf = append(buf, '}')
	reply(req.sink, req.msg.ID, req.result(buf, hs.srv.info))
}

func (hs *hostSession) toolsCall(ctx context.Context, req *request) {
	raw, _ := req.params.Get("name")
	name, ok := jsonrpc.Unquote(raw)
	if !ok || name == "" {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: tools/call needs a tool name"))
		return
	}
	if !req.modern && hs.srv.legacyTasks(req.version) {
		task, rpcErr := hs.srv.taskParams(req.params)
		if rpcErr == nil && task != nil && hostjobs.IsMetaTool(name) {
			rpcErr = jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "mcpx's own tool %s does not run as a task (its taskSupport is forbidden)", name)
		}
		if rpcErr != nil {
			fail(req.sink, req.msg.ID, rpcErr)
			return
		}
		req.task = task
	}
	switch name {
	case "mcpx_search":
		hs.search(ctx, req)
		return
	case "mcpx_call":
		hs.metaCall(ctx, req)
		return
	case "mcpx_job", "mcpx_job_cancel":
		if hs.srv.opts.Jobs == nil {
			break
		}
		if name == "mcpx_job" {
			hostjobs.Job(ctx, req, req.asking())
		} else {
			hostjobs.JobCancel(ctx, req, req.asking())
		}
		return
	case "mcpx_exec", "mcpx_describe":
		if hs.srv.opts.Scripts != nil {
			if name == "mcpx_exec" {
				hs.exec(ctx, req)
			} else {
				hs.describe(ctx, req)
			}
			return
		}
	}
	server, tool, ok := hs.resolve(ctx, name)
	if !ok {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown tool: %s", name))
		return
	}
	if why := hs.toolFilter(req).refusal(name, server, tool); why != "" {
		fail(req.sink, req.msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s", why))
		return
	}
	if req.modern && hs.srv.opts.Jobs != nil {
		if rpcErr := hs.modernTaskCall(req, server, tool); rpcErr != nil {
			fail(req.sink, req.msg.ID, rpcErr)
			return
		}
	}
	hs.relayCall(ctx, req, server, tool, req.params, req.task != nil && !req.task.modern)
}

func (hs *hostSession) resolve(ctx context.Context, name string) (server, tool string, ok bool) {
	return hs.srv.catalog.Resolve(ctx, name)
}

// relayCall relays a tools/call with params (the host's, or built by
// mcpx_call) to server's tool and answers the host.
//
// A call that may outlive the host's hard timer, or that the host asked
// to run in the background, or that repeats a running job's call, goes
// through relayCandidate (jobcall.go).
func (hs *hostSession) relayCall(ctx context.Context, req *request, server, tool string, params *jsonrpc.Object, background bool) {
	req.server = server
	profile := hs.hostProfile(req) // before the _meta is edited for the upstream
	var token json.RawMessage
	var idle, max time.Duration
	if params == req.params && req.meta != nil {
		// The _meta classify parsed, edited from here on (as EditMeta
		// would edit its own parse of it): parsed once.
		params.SetObject("_meta", req.meta)
	}
	if params.Has("_meta") { // without one, there is nothing to read or remove
		mcp.EditMeta(params, func(m *jsonrpc.Object) {
			token, _ = m.Get(mcp.MetaProgressToken)
			idle, max = msMeta(m, MetaIdleTimeoutMs), msMeta(m, MetaMaxTimeoutMs)
			m.Delete(MetaIdleTimeoutMs)
			m.Delete(MetaMaxTimeoutMs)
		})
	}
	call := relay.Call{
		Server:      server,
		Tool:        tool,
		Params:      params,
		ClientCaps:  hs.upstreamCallCaps(req),
		IdleTimeout: idle,
		MaxTimeout:  max,
		Asker:       hs.asker(req),
		Holdable:    req.modern,
		Principal:   hs.principal(),
		Host:        hs.id,
		SessionKey:  hs.sessionKey(),
		Person:      hs.who.ID(),
		Subject:     hs.subjectToken(),
		Resume:      resumeOf(req),
		HostProfile: profile,
	}
	if req.entry != nil {
		call.HostSince = req.entry.Started
	}
	if hs.srv.relay.Audit() != nil { // who, for its record: read only then
		call.Who = hs.who.WithClient(clientName(hs, req))
	}
	if ctx == req.ctx {
		call.Cancel = req.cancel // run cancels it after this returns
	}
	// live reports whether the host still expects to hear of this request:
	// not once it cancelled it or left, nor once its call became a job. A
	// host's cancel ends ctx on the reader goroutine, before anything read
	// after it is answered; checked under the out queue's lock, nothing of
	// this request (progress, a result that won the race) follows that,
	// and an id the host reuses at once is never answered twice.
	live := func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return (!ok || c.Answered()) && req.jobLive()
	}
	call.OnMessage, call.LogLevel = hs.onMessage(req, live) // surfacehost.go
	if token != nil {
		call.HostToken = token
		key := string(token)
		stripMessage := req.version == mcp.Version20241105
		call.Progress = func(p json.RawMessage) {
			if stripMessage {
				if obj, err := jsonrpc.ParseObject(p); err == nil && obj.Delete("message") {
					p = obj.Bytes()
				}
			}
			req.sink.pushProgressWhile(live, key, progressLine(p))
		}
	}
	debug := hs.srv.log.Enabled(ctx, slog.LevelDebug)
	if debug {
		hs.srv.log.Debug("tool call from host", "callId", callID(req), "host", hs.id, "hostRequestId", req.msg.ID.String(), "server", server, "tool", tool)
	}
	if hs.srv.opts.Jobs != nil && hs.relayCandidate(ctx, req, call, live, hostjobs.Timer(profile, token != nil), background) {
		return // it was one that may become a job (jobcall.go)
	}
	res, err := hs.srv.relay.CallTool(ctx, req.entry, call)
	if debug {
		hs.srv.log.Debug("answering host", "callId", callID(req), "host", hs.id, "hostRequestId", req.msg.ID.String(), "failed", err != nil)
	}
	hs.answerCall(req, live, res, err, req.server)
}

// callID is the call id of req's log lines: its registry id, as the
// relay's lines and mcpx status have it; 0 for none.
func callID(req *request) uint64 {
	if req.entry == nil {
		return 0
	}
	return req.entry.ID
}

// progressLine is the notification that carries progress params to a host,
// as jsonrpc.NewNotification(mcp.MethodProgress, params).Encode() writes it.
func progressLine(params json.RawMessage) []byte {
	if len(params) == 0 || bytes.IndexByte(params, '\n') >= 0 || bytes.IndexByte(params, '\r') >= 0 {
		return jsonrpc.NewNotification(mcp.MethodProgress, params).Encode()
	}
	const prefix = `{"jsonrpc":"2.0","method":"` + mcp.MethodProgress + `","params":`
	line := make([]byte, 0, len(prefix)+len(params)+2)
	line = append(line, prefix...)
	line = append(line, params...)
	return append(line, '}')
}

// toolResult adapts an upstream result for the host.
func (hs *hostSession) toolResult(req *request, res json.RawMessage) json.RawMessage {
	if !req.modern && !mayNameResultEdits(res) {
		return res // nothing for resultOf to remove: as it would return it
	}
	if !req.modern {
		if short, ok := withoutComplete(res); ok {
			return short // what resultOf would return, unparsed
		}
	}
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return res
	}
	if !req.modern {
		if rt, ok := obj.Get("resultType"); ok && string(rt) != `"`+mcp.ResultTypeComplete+`"` {
			// input_required or task: bridging those to legacy hosts
			// is not built yet; say so rather than hand over a result
			// the host cannot read.
			return jsonrpc.MustMarshal(toolError("mcpx cannot yet relay a " + string(rt) + " result to a host on protocol " + req.version))
		}
	}
	return req.resultOf(res, obj, hs.srv.info)
}

// mayNameResultEdits reports whether a result may have a member a legacy
// host's result loses (resultOf): a resultType, or mcpx's serverInfo key
// in its _meta. Neither name can be in a result without its plain
// spelling, or a \u escape (the only escape that spells a letter),
// among its bytes; most results have none of those, and are not parsed.
func mayNameResultEdits(res []byte) bool {
	return bytes.Contains(res, []byte("resultType")) || bytes.Contains(res, []byte("serverInfo")) || bytes.Contains(res, []byte(`\u`))
}

// completeSuffix is how a 2026-07-28 upstream's result most often ends:
// its resultType, last.
const completeSuffix = `,"resultType":"` + mcp.ResultTypeComplete + `"}`

// withoutComplete returns res without its resultType, for a legacy host,
// when res ends with completeSuffix and nothing else in it is for
// resultOf (no other "resultType", no "serverInfo", no \u escape): what
// resultOf returns then, without parsing res (the suffix cannot be inside
// a string, whose quotes are escaped, nor a nested object's, which would
// end with two braces). ok is false otherwise. Saves parsing and
// re-encoding every result a legacy host gets from a 2026-07-28 upstream
// (BenchmarkRelayCall in internal/hostserver: a legacy host, the demo
// upstream in auto mode).
func withoutComplete(res []byte) (short []byte, ok bool) {
	if !bytes.HasSuffix(res, []byte(completeSuffix)) || bytes.Count(res, []byte("resultType")) != 1 ||
		bytes.Contains(res, []byte("serverInfo")) || bytes.Contains(res, []byte(`\u`)) {
		return nil, false
	}
	short = make([]byte, 0, len(res)-len(completeSuffix)+1)
	short = append(short, res[:len(res)-len(completeSuffix)]...)
	return append(short, '}'), true
}

func msMeta(meta *jsonrpc.Object, key string) time.Duration {
	raw, ok := meta.Get(key)
	if !ok {
		return 0
	}
	var ms float64
	if json.Unmarshal(raw, &ms) != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
