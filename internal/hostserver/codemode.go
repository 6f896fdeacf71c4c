package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"mcpx/internal/catalog"
	"mcpx/internal/codemode"
	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// describeToolJSON is mcpx_describe's definition.
var describeToolJSON = []byte(`{"name":"mcpx_describe","title":"Describe tools for a script","description":"TypeScript declarations of tools, generated from their input and output schemas, for writing mcpx_exec scripts. Name tools as mcpx_search shows them, or a server to describe all of its tools.","inputSchema":{"type":"object","properties":{"tools":{"type":"array","items":{"type":"string"},"description":"Tool names (as mcpx_search shows them) or server names."}},"required":["tools"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)

// execToolJSON is mcpx_exec's definition; its description names the
// servers behind mcpx that the host may use.
func (hs *hostSession) execToolJSON(req *request) []byte {
	return hs.srv.execTool(hs.toolFilter(req).visible())
}

// ExecTool is mcpx_exec's tool definition as hosts see it (its
// description names the servers behind mcpx), nil when the server runs
// no scripts; the local API lists it for integrations.
func (s *Server) ExecTool() json.RawMessage { return s.execTool(nil) }

// execTool is mcpx_exec's definition naming the servers visible reports
// true for (nil: all).
func (s *Server) execTool(visible func(server string) bool) json.RawMessage {
	if s.opts.Scripts == nil {
		return nil
	}
	names := s.relay.Pool().Names()
	if visible != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return !visible(n) })
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = "tools" + jsMember(n)
	}
	desc := "Run a JavaScript or TypeScript script that calls many tools and returns only what matters. " +
		"Top-level await and return work; the returned value is the result (objects also as structuredContent). " +
		"Call a tool with `await tools.<server>.<tool>(args)`: it resolves to the tool's structuredContent, else its text, and throws an Error with the tool's text when the tool fails. " +
		"Servers: " + strings.Join(paths, ", ") + ". " +
		"Also: mcpx.call(name, args) returns a tool's whole result; mcpx.search(words) finds tools; progress(value, total?, message?) reports progress; sleep(ms), setTimeout; console.log output is returned beside the result; Promise.all runs calls in parallel (a few at a time). " +
		"No require, import, fetch, process, filesystem or network. Use mcpx_describe for TypeScript declarations of the tools."
	def := map[string]any{
		"name": "mcpx_exec", "title": "Run a script that calls tools", "description": desc,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"code":           map[string]any{"type": "string", "description": "The script's body."},
			"timeoutSeconds": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": "End the script after this long in any case (can only shorten the configured maximum)."},
			"background":     map[string]any{"type": "boolean", "description": "Run the script as a job and return its job_id at once; read its result with mcpx_job, stop it with mcpx_job_cancel."},
		}, "required": []string{"code"}},
	}
	return jsonrpc.MustMarshal(def)
}

// jsMember is how a script reaches a property named name.
func jsMember(name string) string {
	ident := name != ""
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
		}
	}
	if ident {
		return "." + name
	}
	return "[" + jsonString(name) + "]"
}

// exec serves mcpx_exec: the script runs until it ends, the host cancels
// or leaves, or its timeouts; its progress() goes to the host under the
// request's progress token.
func (hs *hostSession) exec(ctx context.Context, req *request) {
	var args struct {
		Code       string  `json:"code"`
		MaxSeconds float64 `json:"timeoutSeconds"`
		Background bool    `json:"background"`
	}
	raw, _ := req.params.Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || strings.TrimSpace(args.Code) == "" {
		msg := "mcpx_exec needs a script in code"
		if err != nil {
			msg = "mcpx_exec: invalid arguments: " + err.Error()
		}
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError(msg)), hs.srv.info))
		return
	}
	live := func() bool {
		c, ok := relay.CauseOf(context.Cause(ctx))
		return (!ok || c.Answered()) && req.jobLive()
	}
	s := codemode.Script{
		Code:       args.Code,
		Timeout:    time.Duration(args.MaxSeconds * float64(time.Second)),
		Name:       hs.id + "/" + req.msg.ID.String(),
		Host:       hs.id,
		SessionKey: hs.sessionKey(),
		Who:        hs.who.WithClient(clientName(hs, req)),
		Person:     hs.who.ID(),
	}
	if filter := hs.toolFilter(req); filter.f != nil {
		s.Allow = func(server, tool string) error {
			if why := filter.refusal(server+filter.sep+tool, server, tool); why != "" {
				return errors.New(why)
			}
			return nil
		}
	}
	if args.Background && hs.srv.opts.Jobs == nil {
		hs.replyToolError(req, "mcpx_exec: this gateway keeps no jobs, so a script cannot run in the background")
		return
	}
	profile := hs.hostProfile(req)
	var sp *scriptProgress
	token, hasToken := mcp.Meta(req.params).Get(mcp.MetaProgressToken)
	if hasToken {
		key := string(token)
		sp = startScriptProgress(profile, token, s.Name, req.version != mcp.Version20241105, func(p []byte) {
			req.sink.pushProgressWhile(live, key, progressLine(p))
		})
		s.Progress = sp.progress
	}
	// A script that may outlive its host's hard timer becomes a job by the
	// rule a call follows, as one asked to run in the background does.
	if hs.srv.opts.Jobs != nil && hs.execCandidate(ctx, req, s, scriptKey(args.Code, args.MaxSeconds), hostjobs.Timer(profile, hasToken), args.Background, sp, live) {
		return
	}
	out, err := hs.srv.opts.Scripts.Exec(ctx, s)
	if sp != nil {
		sp.stop() // nothing after the answer
	}
	if err != nil {
		if c, ok := relay.CauseOf(err); ok && !c.Answered() {
			return
		}
		pushAnswer(req.sink, live, jsonrpc.NewError(req.msg.ID, callError(err, "")).Encode())
		return
	}
	pushAnswer(req.sink, live, jsonrpc.NewResult(req.msg.ID, req.result(codemode.ToolResult(out), hs.srv.info)).Encode())
}

// describe serves mcpx_describe.
func (hs *hostSession) describe(ctx context.Context, req *request) {
	var args struct {
		Tools []string `json:"tools"`
	}
	raw, _ := req.params.Get("arguments")
	if err := json.Unmarshal(raw, &args); err != nil || len(args.Tools) == 0 {
		reply(req.sink, req.msg.ID, req.result(jsonrpc.MustMarshal(toolError("mcpx_describe needs tools: a list of tool or server names")), hs.srv.info))
		return
	}
	names, refused := hs.describable(ctx, req, hs.exposedNames(ctx, args.Tools))
	decls, unknown := hs.srv.opts.Scripts.Describe(ctx, names)
	if ctx.Err() != nil {
		hs.end(req, context.Cause(ctx))
		return
	}
	if len(unknown) > 0 {
		decls += "\n// unknown (use mcpx_search): " + strings.Join(unknown, ", ") + "\n"
	}
	for _, why := range refused {
		decls += "\n// " + why + "\n"
	}
	res := jsonrpc.MustMarshal(map[string]any{"content": []map[string]string{{"type": "text", "text": decls}}})
	reply(req.sink, req.msg.ID, req.result(res, hs.srv.info))
}

// exposedNames turns each "server.tool" among names (the form mcpx call
// takes) that names no tool or server itself into the tool's exposed
// name; the other names are kept as they are.
func (hs *hostSession) exposedNames(ctx context.Context, names []string) []string {
	var snap *catalog.Snapshot
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		server, tool, dotted := strings.Cut(n, ".")
		if !dotted {
			continue
		}
		if snap == nil {
			snap = hs.srv.catalog.Snapshot(ctx)
		}
		if _, ok := snap.Lookup(n); ok {
			continue
		}
		for _, t := range snap.Tools {
			if t.Server == server && t.Tool == tool {
				out[i] = t.Name
				break
			}
		}
	}
	return out
}

// describable returns the names of mcpx_describe's request that the
// host's tool filter lets it see: a tool it may not use is left out with
// the reason; a server stands for the tools of it the host may use.
func (hs *hostSession) describable(ctx context.Context, req *request, names []string) (allowed, refused []string) {
	filter := hs.toolFilter(req)
	if filter.f == nil {
		return names, nil
	}
	snap := hs.srv.catalog.Snapshot(ctx)
	for _, n := range names {
		if t, ok := snap.Lookup(n); ok {
			if why := filter.refusal(n, t.Server, t.Tool); why != "" {
				refused = append(refused, why)
			} else {
				allowed = append(allowed, n)
			}
			continue
		}
		server := false
		for _, t := range snap.Tools {
			if t.Server == n {
				server = true
				if filter.allows(t.Server, t.Tool) {
					allowed = append(allowed, t.Name)
				}
			}
		}
		if !server {
			allowed = append(allowed, n) // for Describe to call unknown
		}
	}
	return allowed, refused
}
