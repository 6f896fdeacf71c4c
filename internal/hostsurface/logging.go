package hostsurface

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// Logging (legacy sessions). Upstream sessions are shared by every host,
// so each legacy upstream that serves logging is set to the most verbose
// level any host asked for, and each host gets only the messages its own
// level admits. A host that never set a level is filtered at
// defaultLevel. A perHost server's sessions of one host are not set a
// level (they log at their own default); their messages go to that host
// alone, filtered the same way.
// Messages reach hosts with a stream of their own (stdio); 2026-07-28
// hosts and legacy HTTP sessions get none yet, since mcpx does not yet
// tell which request an upstream's message belongs to.

// levels are the syslog severities of MCP logging, most verbose first.
var levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

const defaultLevel = "info"

func levelRank(l string) int { return slices.Index(levels, l) }

// logLevels are the levels hosts asked for, and what each upstream
// session was set to.
type logLevels struct {
	mu       sync.Mutex
	byHost   map[Host]string
	upstream map[*upstream.Session]string
}

func (s *Surface) setLevel(ctx context.Context, h Host, r Request) {
	level, rpcErr := stringParam(r, "level")
	if rpcErr == nil && levelRank(level) < 0 {
		rpcErr = jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown log level %s (want one of %v)", jsonString(level), levels)
	}
	if rpcErr != nil {
		fail(r, rpcErr)
		return
	}
	l := &s.logs
	l.mu.Lock()
	if l.byHost == nil {
		l.byHost, l.upstream = map[Host]string{}, map[*upstream.Session]string{}
	}
	l.byHost[h] = level
	l.mu.Unlock()
	s.applyLevels(ctx)
	reply(r, json.RawMessage("{}"))
}

func (s *Surface) forgetLevel(h Host) {
	s.logs.mu.Lock()
	_, had := s.logs.byHost[h]
	delete(s.logs.byHost, h)
	s.logs.mu.Unlock()
	if had {
		ctx, cancel := context.WithTimeout(context.Background(), upstreamSubscriptionDeadline)
		defer cancel()
		s.applyLevels(ctx)
	}
}

// applyLevels sets every live legacy upstream that serves logging to the
// most verbose level a host asked for, where it is not set so already.
// With no host left, upstreams keep the last level.
func (s *Surface) applyLevels(ctx context.Context) {
	s.logs.mu.Lock()
	want := ""
	for _, lv := range s.logs.byHost {
		if want == "" || levelRank(lv) < levelRank(want) {
			want = lv
		}
	}
	s.logs.mu.Unlock()
	if want == "" {
		return
	}
	for _, name := range s.relay.Pool().Names() {
		sess, err := s.relay.Pool().Session(ctx, name)
		if err != nil || sess.Modern() || !sess.HasCapability("logging") {
			continue
		}
		s.logs.mu.Lock()
		done := s.logs.upstream[sess] == want
		s.logs.mu.Unlock()
		if done {
			continue
		}
		params := &jsonrpc.Object{}
		params.Set("level", jsonrpc.MustMarshal(want))
		if _, err := s.relay.Send(ctx, nil, relay.Request{Server: name, Method: mcp.MethodLoggingSetLevel, Params: params}); err != nil {
			s.log.Warn("could not set an upstream's log level", "server", name, "level", want, "err", err)
			continue
		}
		s.logs.mu.Lock()
		for old := range s.logs.upstream {
			if old.Err() != nil {
				delete(s.logs.upstream, old)
			}
		}
		s.logs.upstream[sess] = want
		s.logs.mu.Unlock()
		s.log.Info("set an upstream's log level", "server", name, "level", want)
	}
}

// HostLogMessage delivers a log message of the upstream session a perHost
// server runs for one host (whose hostKey is host) to that host alone, as
// logMessage does. It never blocks.
func (s *Surface) HostLogMessage(server, host string, msg *jsonrpc.Message) {
	s.deliverLog(server, msg, func(h Host) bool { return h.SessionKey() == host })
}

// logMessage delivers an upstream's notifications/message to every host
// with a stream whose level admits it, byte for byte.
func (s *Surface) logMessage(server string, msg *jsonrpc.Message) {
	s.deliverLog(server, msg, func(Host) bool { return true })
}

// deliverLog delivers msg to the hosts with a stream that to reports true
// for, whose level admits it, and that may use server (Host.MayUse).
func (s *Surface) deliverLog(server string, msg *jsonrpc.Message, to func(Host) bool) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || levelRank(p.Level) < 0 {
		return
	}
	type host struct {
		h   Host
		out Stream
	}
	s.watch.mu.Lock()
	hosts := make([]host, 0, len(s.watch.legacy))
	for h, out := range s.watch.legacy {
		if to(h) {
			hosts = append(hosts, host{h, out})
		}
	}
	s.watch.mu.Unlock()
	line := jsonrpc.NewNotification(mcp.MethodMessage, msg.Params).Encode()
	n := 0
	for _, host := range hosts {
		s.logs.mu.Lock()
		lv, ok := s.logs.byHost[host.h]
		s.logs.mu.Unlock()
		if !ok {
			lv = defaultLevel
		}
		if levelRank(p.Level) >= levelRank(lv) && host.h.MayUse(server) {
			host.out.Notify(line)
			n++
		}
	}
	s.log.Debug("relayed a log message", "server", server, "level", p.Level, "hosts", n)
}

// OnMessage returns what receives the log messages an upstream sends on
// a request's own stream: they go to this request's host only, on the
// request's stream, if its level admits them. A 2026-07-28 request's level
// is its _meta logLevel (none: no messages, as that revision says); a
// legacy host's is the one it set, which is also returned, for modern
// upstreams to be asked for (they log only for a request carrying one).
// Once the call is a job, they go to the host's stream outside its
// requests, while it has one (Request.JobLine).
func (s *Surface) OnMessage(h Host, r Request, live func() bool) (func(*jsonrpc.Message), string) {
	var level, hostLevel string
	if r.Modern() {
		l, ok := mcp.MetaString(r.HostMeta(), mcp.MetaLogLevel)
		if !ok {
			return func(*jsonrpc.Message) {}, ""
		}
		level = l
	} else {
		s.logs.mu.Lock()
		l, ok := s.logs.byHost[h]
		s.logs.mu.Unlock()
		if !ok {
			l = defaultLevel
		}
		level, hostLevel = l, l
	}
	return func(msg *jsonrpc.Message) {
		var p struct {
			Level string `json:"level"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || levelRank(p.Level) < levelRank(level) {
			return
		}
		line := jsonrpc.NewNotification(mcp.MethodMessage, msg.Params).Encode()
		if r.JobLine(line) {
			return // a job's: to its host's stream, not its answered request's
		}
		r.Push(live, line)
	}, hostLevel
}

// CheckLogLevel refuses a 2026-07-28 request whose _meta logLevel is not
// a level (-32602, as that revision says).
func CheckLogLevel(meta *jsonrpc.Object) *jsonrpc.Error {
	raw, ok := meta.Get(mcp.MetaLogLevel)
	if !ok {
		return nil
	}
	var l string
	if json.Unmarshal(raw, &l) != nil || levelRank(l) < 0 {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: _meta %q must be one of %v", mcp.MetaLogLevel, levels)
	}
	return nil
}
