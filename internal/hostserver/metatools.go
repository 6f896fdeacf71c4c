package hostserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"mcpx/internal/catalog"
	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The meta-tools' definitions, as hosts see them.
var (
	searchToolJSON = []byte(`{"name":"mcpx_search","title":"Search tools","description":"Find tools across every MCP server behind this gateway by words in their names and descriptions. Returns each match's name, description and input schema; call one by its name, or through mcpx_call.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Words to look for. Empty lists every tool."},"limit":{"type":"integer","minimum":1,"maximum":200,"description":"Most tools to return (default 10)."}},"required":["query"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	callToolJSON   = []byte(`{"name":"mcpx_call","title":"Call a tool","description":"Call any tool behind this gateway by the name mcpx_search shows, with its arguments. Progress, cancellation and timeouts work as for a direct call.","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, as mcpx_search shows it."},"arguments":{"type":"object","description":"The tool's arguments."},"idleTimeoutSeconds":{"type":"number","exclusiveMinimum":0,"description":"End the call after this long without progress (can only shorten the configured timeout)."},"timeoutSeconds":{"type":"number","exclusiveMinimum":0,"description":"End the call after this long in any case (can only shorten the configured maximum)."},"background":{"type":"boolean","description":"Run the call as a job and return its job_id at once; read the result with mcpx_job."}},"required":["name"]}}`)
)

type searchHit struct {
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

func (hs *hostSession) search(ctx context.Context, req *request) {
	var args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if raw, ok := req.params.Get("arguments"); ok {
		if err := json.Unmarshal(raw, &args); err != nil {
			reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("mcpx_search: invalid arguments: "+err.Error())), hs.srv.info))
			return
		}
	}
	if args.Limit <= 0 {
		args.Limit = 10
	}
	snap := hs.srv.catalog.Snapshot(ctx)
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	hits := []searchHit{}
	var text strings.Builder
	filter := hs.toolFilter(req)
	limit := args.Limit
	if filter.f != nil {
		limit = len(snap.Tools)
	}
	found, err := snap.SearchContext(ctx, args.Query, limit)
	if err != nil {
		if ctx.Err() != nil {
			hs.end(req, context.Cause(ctx))
			return
		}
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("mcpx_search: "+err.Error())), hs.srv.info))
		return
	}
	if filter.f != nil {
		all := found
		found = found[:0:0]
		for _, t := range all {
			if len(found) < args.Limit && filter.allows(t.Server, t.Tool) {
				found = append(found, t)
			}
		}
	}
	for _, t := range found {
		hits = append(hits, searchHit{Name: t.Name, Server: t.Server, Description: t.Description, InputSchema: t.InputSchema()})
		text.WriteString(t.Name)
		if t.Description != "" {
			text.WriteString(": ")
			text.WriteString(firstLine(t.Description))
		}
		if s := t.InputSchema(); s != nil {
			text.WriteString("\n  input: ")
			text.Write(s)
		}
		text.WriteString("\n")
	}
	if len(hits) == 0 {
		text.WriteString("no tools match " + jsonString(args.Query))
	}
	for server, why := range snap.Errors {
		if !filter.usesServer(server) {
			continue // a server the host may not use is not named to it
		}
		text.WriteString("\n(server " + server + " is unavailable: " + why + ")")
	}
	res := jsonrpc.MustMarshal(struct {
		Content           []map[string]string `json:"content"`
		StructuredContent map[string]any      `json:"structuredContent"`
	}{
		Content:           []map[string]string{{"type": "text", "text": strings.TrimSpace(text.String())}},
		StructuredContent: map[string]any{"tools": hits},
	})
	reply(req.sink, req.msg.ID, req.result(res, hs.srv.info))
}

// metaCall serves mcpx_call: the named tool is called with the host's
// _meta (its progress token included), as if the host had called it.
func (hs *hostSession) metaCall(ctx context.Context, req *request) {
	var args struct {
		Name        string          `json:"name"`
		Arguments   json.RawMessage `json:"arguments"`
		IdleSeconds float64         `json:"idleTimeoutSeconds"`
		MaxSeconds  float64         `json:"timeoutSeconds"`
		Background  bool            `json:"background"`
	}
	raw, _ := req.params.Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || args.Name == "" {
		msg := "mcpx_call needs the name of a tool"
		if err != nil {
			msg = "mcpx_call: invalid arguments: " + err.Error()
		}
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError(msg)), hs.srv.info))
		return
	}
	if catalog.Reserved[args.Name] {
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("mcpx_call calls upstream tools, not "+args.Name)), hs.srv.info))
		return
	}
	server, tool, ok := hs.resolve(ctx, args.Name)
	if !ok || !hs.upstreamHasTool(ctx, server, tool) {
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("unknown tool "+jsonString(args.Name)+"; use mcpx_search to find tools")), hs.srv.info))
		return
	}
	if why := hs.toolFilter(req).refusal(args.Name, server, tool); why != "" {
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("mcpx_call: "+why)), hs.srv.info))
		return
	}
	params := &jsonrpc.Object{}
	// The relay sets the upstream's name; until then this one names the
	// tool as the host did (heartbeats say what they wait on).
	params.Set("name", jsonrpc.MustMarshal(args.Name))
	if len(args.Arguments) > 0 {
		params.Set("arguments", args.Arguments)
	}
	meta := mcp.Meta(req.params)
	setMs := func(key string, secs float64) {
		if secs > 0 {
			meta.Set(key, jsonrpc.MustMarshal(float64(time.Duration(secs*float64(time.Second)).Milliseconds())))
		}
	}
	setMs(MetaIdleTimeoutMs, args.IdleSeconds)
	setMs(MetaMaxTimeoutMs, args.MaxSeconds)
	if meta.Len() > 0 {
		params.Set("_meta", meta.Bytes())
	}
	hs.relayCall(ctx, req, server, tool, params, args.Background && hs.srv.opts.Jobs != nil)
}

// upstreamHasTool reports whether server lists tool. A name with a server's
// prefix resolves without a listing, so without this check an unknown tool
// would come back as the upstream's -32602, a protocol error of mcpx_call
// itself, instead of a tool error the model can act on. When the server
// cannot be listed, the call goes ahead and reports why.
func (hs *hostSession) upstreamHasTool(ctx context.Context, server, tool string) bool {
	tools, err := hs.srv.relay.Pool().Tools(ctx, server)
	if err != nil {
		return true
	}
	for _, t := range tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func jsonString(s string) string { return string(jsonrpc.MustMarshal(s)) }

// JobTools returns mcpx_job and mcpx_job_cancel as hosts see them, nil
// when the server keeps no jobs: the local API lists them for its own
// clients, which serve them through its job routes.
func (s *Server) JobTools() []json.RawMessage {
	if s.opts.Jobs == nil {
		return nil
	}
	return []json.RawMessage{hostjobs.JobTool, hostjobs.JobCancelTool}
}
