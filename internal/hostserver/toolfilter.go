package hostserver

import (
	"fmt"
	"strings"

	"mcpx/internal/config"
)

// A host's tool filter (mcpx.hosts.NAME.tools) decides which tools it
// sees in tools/list and mcpx_search and may call, directly or through
// mcpx_call. The host is known by the name of the named token it holds
// over HTTP, else by the clientInfo.name it sent.

// hostFilter is the filter of one host session, read from the current
// config for each request.
type hostFilter struct {
	f   *config.ToolFilter
	sep string
}

func (hs *hostSession) toolFilter(req *request) hostFilter {
	f, sep := hs.srv.relay.HostTools(hs.tokenName(), clientName(hs, req))
	return hostFilter{f: f, sep: sep}
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

// tokenName is the name of the named token the host holds, "" for none
// (stdio, the default token): a principal is "http:NAME#fingerprint".
func (hs *hostSession) tokenName() string {
	rest, ok := strings.CutPrefix(hs.httpPrincipal, principalHTTP+":")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "#")
	return name
}

// allows reports whether the host may see and call server's tool.
func (h hostFilter) allows(server, tool string) bool {
	ok, _ := h.f.Allows(server + h.sep + tool)
	return ok
}

// refusal returns why the host may not call server's tool (exposed to
// it as name), or "" if it may.
func (h hostFilter) refusal(name, server, tool string) string {
	ok, why := h.f.Allows(server + h.sep + tool)
	if ok {
		return ""
	}
	if strings.HasPrefix(why, "rule ") {
		why += " refuses it"
	}
	return fmt.Sprintf("tool %q is not allowed for this host: %s", name, why)
}
