package demo

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Who the server says it is.
var (
	serverInfo = mcp.Implementation{Name: "mcpx-demo", Version: "1.0.0"}

	instructions = "mcpx-demo is the demo server bundled with mcpx. " +
		"Call export for a slow export with live progress; cancel it to see cancellation reach the server."
)

// classify tells whether req is a modern (2026-07-28, stateless) request: it
// carries _meta["io.modelcontextprotocol/protocolVersion"] and the era allows
// it. A modern request with an unsupported version gets -32022, one without
// client capabilities -32602. In the modern era every request but
// server/discover must be modern (initialize is refused by its handler).
func (s *server) classify(req *request) (bool, error) {
	if s.cfg.Era == EraLegacy || req.msg.Method == mcp.MethodInitialize {
		return false, nil
	}
	raw, ok := req.obj.Get(mcp.MetaProtocolVersion)
	if !ok {
		if s.cfg.Era == EraModern && req.msg.Method != mcp.MethodDiscover {
			return false, invalidParams("missing _meta %q: this server speaks only %s", mcp.MetaProtocolVersion, mcp.Version20260728)
		}
		return false, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, invalidParams("_meta %q must be a string", mcp.MetaProtocolVersion)
	}
	if !mcp.IsModern(v) || !slices.Contains(s.cfg.supported, v) {
		return false, versionError(mcp.CodeUnsupportedProtocolVersion, v, s.cfg.supported,
			"Unsupported protocol version %q (supported: %s)", v, strings.Join(s.cfg.supported, ", "))
	}
	if _, ok := req.obj.Get(mcp.MetaClientCapabilities); !ok {
		return false, invalidParams("missing _meta %q", mcp.MetaClientCapabilities)
	}
	return true, nil
}

// initialize answers a legacy handshake after Options.InitDelay. Its ctx is
// not cancelled by notifications/cancelled (initialize must not be).
func (s *server) initialize(ctx context.Context, c *call, req *request) (json.RawMessage, error) {
	var p mcp.InitializeParams
	if len(req.msg.Params) > 0 {
		if err := json.Unmarshal(req.msg.Params, &p); err != nil {
			return nil, invalidParams("initialize: %v", err)
		}
	}
	if s.cfg.Era == EraModern {
		return nil, versionError(jsonrpc.CodeInvalidParams, p.ProtocolVersion, s.cfg.supported,
			"unsupported protocol version %q: this server speaks only %s, without initialize "+
				"(use server/discover and per-request _meta)", p.ProtocolVersion, strings.Join(s.cfg.supported, ", "))
	}
	if err := sleep(ctx, s.cfg.InitDelay); err != nil {
		return nil, err
	}
	v := s.negotiate(p.ProtocolVersion)
	s.record(Event{Event: EventInitialize, ID: c.id.Raw(), Requested: p.ProtocolVersion, ProtocolVersion: v})
	s.log.Info("initialized", "client", p.ClientInfo.Name, "requested", p.ProtocolVersion, "version", v)
	return marshal(mcp.InitializeResult{
		ProtocolVersion: v,
		Capabilities:    s.capabilities(`{"tools":{"listChanged":false}`),
		ServerInfo:      serverInfo,
		Instructions:    instructions,
	}), nil
}

// capabilities closes a capabilities object that starts with tools,
// adding the surface's with Options.Surface.
func (s *server) capabilities(tools string) json.RawMessage {
	if s.cfg.Surface {
		return json.RawMessage(tools + "," + surfaceCapabilities + "}")
	}
	return json.RawMessage(tools + "}")
}

// negotiate returns the requested legacy revision if the server speaks it
// (up to Options.MaxVersion), else the newest one it speaks.
func (s *server) negotiate(requested string) string {
	if slices.Contains(s.cfg.legacy, requested) {
		return requested
	}
	return s.cfg.legacy[0]
}

// discover answers server/discover after Options.InitDelay; the wait ends
// early if the request is cancelled.
func (s *server) discover(ctx context.Context) (json.RawMessage, error) {
	if err := sleep(ctx, s.cfg.InitDelay); err != nil {
		return nil, err
	}
	return marshal(mcp.DiscoverResult{
		ResultType:        mcp.ResultTypeComplete,
		SupportedVersions: s.cfg.supported,
		Capabilities:      s.capabilities(s.discoverTools()),
		Meta:              marshal(map[string]mcp.Implementation{mcp.MetaServerInfo: serverInfo}),
		Instructions:      instructions,
	}), nil
}

// discoverTools opens discover's capabilities: tools, and with
// Options.Tasks the tasks extension.
func (s *server) discoverTools() string {
	if s.cfg.Tasks {
		return `{"tools":{},"extensions":{"` + mcp.ExtensionTasks + `":{}}`
	}
	return `{"tools":{}`
}
