package hostserver

import (
	"mcpx/internal/config"
	"mcpx/internal/principal"
)

// A host's tool filter (mcpx.hosts.NAME.tools) decides which tools it
// sees in tools/list and mcpx_search and may call, directly or through
// mcpx_call. The host is known by the name of the named token it holds
// over HTTP, else by the clientInfo.name it sent. The decision is its
// principal's policy's (principal.Policy.Decide, CallTool), the one
// every face goes through.

// hostFilter is the policy of one host request, read from the current
// config for each request; f is its tool filter (nil: none, every tool
// is allowed) and sep the separator its patterns are written with.
type hostFilter struct {
	pol principal.Policy
	f   *config.ToolFilter
	sep string
}

func (hs *hostSession) toolFilter(req *request) hostFilter {
	return hs.filterOf(hs.who.WithClient(clientName(hs, req)))
}

// filterOf is the policy of who, a principal of this session's.
func (hs *hostSession) filterOf(who principal.Principal) hostFilter {
	pol := hs.srv.relay.Policy(who)
	f, sep := pol.Tools()
	return hostFilter{pol: pol, f: f, sep: sep}
}

// clientName is the clientInfo.name of the host behind req: from its
// initialize, or, for a 2026-07-28 request, from the request's _meta.
func clientName(hs *hostSession, req *request) string {
	if req.modern {
		return hs.srv.clientName(req.hostMeta())
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.clientName
}

// allows reports whether the host may see and call server's tool.
func (h hostFilter) allows(server, tool string) bool {
	return h.pol.Allows(principal.CallTool, principal.Target{Server: server, Tool: tool})
}

// refusal returns why the host may not call server's tool (exposed to
// it as name), or "" if it may.
func (h hostFilter) refusal(name, server, tool string) string {
	if err := h.pol.Decide(principal.CallTool, principal.Target{Name: name, Server: server, Tool: tool}); err != nil {
		return err.Error()
	}
	return ""
}
