package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// tool is one tool; its definition is toolDefs[name].
type tool struct {
	name string
	run  func(ctx context.Context, t *toolCall) (json.RawMessage, error)
}

// tools are the tools in tools/list order.
var tools = []tool{
	{"export", runExport},
	{"scan", runScan},
	{"stubborn", runStubborn},
	{"wait", runWait},
	{"cancellations", runCancellations},
	{"echo", runEcho},
	{"burst", runBurst},
	{"raw", runRaw},
	{"crash", runCrash},
	{"garbage", runGarbage},
	{"fail", runFail},
	{"sleep_then", runSleepThen},
	{"ask", runAsk},
	{"gated", runGated},
	{"ask_later", runAskLater},
}

// toolCall is what a tool runs with. A tool returns a result, or the cause
// of its context when it stopped early (then nothing is sent).
type toolCall struct {
	s        *server
	c        *call
	req      *request
	args     json.RawMessage // params.arguments as sent; nil if absent
	params   json.RawMessage // the tools/call params as sent
	modern   bool            // a stateless 2026-07-28 request
	progress *progress
}

// checker is a tool's arguments, defaults filled in before decoding.
type checker interface{ check() error }

// decode reads the arguments into v, over its defaults, and checks them.
func (t *toolCall) decode(v checker) error {
	if len(t.args) > 0 && string(t.args) != "null" {
		if err := json.Unmarshal(t.args, v); err != nil {
			return err
		}
	}
	return v.check()
}

// listTools answers tools/list, a page at a time if Options.PageSize is set.
func (s *server) listTools(req *request) (json.RawMessage, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(req.msg.Params) > 0 {
		if err := json.Unmarshal(req.msg.Params, &p); err != nil {
			return nil, invalidParams("tools/list: %v", err)
		}
	}
	start := 0
	if p.Cursor != nil {
		n, ok := parseCursor(*p.Cursor, len(s.tools))
		if !ok {
			return nil, invalidParams("invalid cursor %q", *p.Cursor)
		}
		start = n
	}
	end := len(s.tools)
	if s.cfg.PageSize > 0 {
		end = min(start+s.cfg.PageSize, end)
	}
	b := []byte(`{"tools":[`)
	for i, t := range s.tools[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, toolDef(t.name)...)
	}
	b = append(b, ']')
	if end < len(s.tools) {
		b = append(b, `,"nextCursor":`...)
		b = append(b, marshal(cursor(end))...)
	}
	return append(b, '}'), nil
}

// cursor returns the opaque cursor of the page starting at tool i.
func cursor(i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("mcpx-demo/tools/" + strconv.Itoa(i)))
}

// parseCursor returns the start of the page a cursor names, in a list of n tools.
func parseCursor(c string, n int) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(b), "mcpx-demo/tools/")
	i, err := strconv.Atoi(rest)
	return i, ok && err == nil && i > 0 && i < n
}

// callTool answers tools/call. An unknown tool is a protocol error; bad
// arguments are a tool error (isError).
func (s *server) callTool(ctx context.Context, c *call, req *request) (json.RawMessage, error) {
	i := slices.IndexFunc(s.tools, func(t tool) bool { return t.name == req.name })
	if i < 0 {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Unknown tool: %s", req.name)
	}
	args, _ := req.params.Get("arguments") // params were parsed when the request came
	s.log.Info("tool called", "tool", req.name, "id", c.id.String(), "progress", c.token != nil)
	_, modern := req.obj.Get(mcp.MetaProtocolVersion)
	modern = modern && s.cfg.Era != EraLegacy
	return s.tools[i].run(ctx, &toolCall{s: s, c: c, req: req, args: args, params: req.msg.Params, modern: modern, progress: &progress{s: s, c: c}})
}

// toolResult is a tool result with one text block, then structuredContent
// (if not nil) and "isError":true (if set).
func toolResult(text string, structured json.RawMessage, isError bool) json.RawMessage {
	var o jsonrpc.Object
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	o.Set("content", marshal([]block{{"text", text}}))
	if structured != nil {
		o.Set("structuredContent", structured)
	}
	if isError {
		o.Set("isError", json.RawMessage(`true`))
	}
	return o.Bytes()
}

func textResult(text string) json.RawMessage { return toolResult(text, nil, false) }

func errorResult(format string, args ...any) json.RawMessage {
	return toolResult(fmt.Sprintf(format, args...), nil, true)
}
