package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// host serves one script's calls: the sandbox.Host of Exec.
type host struct {
	e *Engine
	s *Script
	t *timers

	last     float64 // the last progress value passed on
	reported bool
}

// progressToken is the token of inner calls: mcpx reads their progress
// (it keeps the script alive) and never passes it on.
var progressToken = json.RawMessage(`"script"`)

func (h *host) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	h.t.touch()
	defer h.t.touch()
	switch method {
	case "tool":
		var p struct {
			Server string          `json:"server"`
			Tool   string          `json:"tool"`
			Args   json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("tools.<server>.<tool>: %w", err)
		}
		res, err := h.call(ctx, p.Server, p.Tool, p.Args)
		if err != nil {
			return nil, err
		}
		return unwrap(p.Server, p.Tool, res)
	case "call":
		var p struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
			return nil, errors.New("mcpx.call needs a tool's name")
		}
		server, tool, ok := h.e.o.Catalog.Resolve(ctx, p.Name)
		if !ok {
			return nil, fmt.Errorf("unknown tool %q; mcpx.search finds tools", p.Name)
		}
		return h.call(ctx, server, tool, p.Args)
	case "search":
		var p struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("mcpx.search: %w", err)
		}
		return h.search(ctx, p.Query, p.Limit)
	}
	return nil, fmt.Errorf("no such script call %q", method)
}

// call relays one inner call, owned by the script: ctx ends when the
// script does, and the relay then cancels it upstream with ctx's cause.
func (h *host) call(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
	if server == "" || tool == "" {
		return nil, errors.New("a tool call needs a server and a tool")
	}
	if h.s.Allow != nil {
		if err := h.s.Allow(server, tool); err != nil {
			return nil, err
		}
	}
	params := &jsonrpc.Object{}
	if len(args) > 0 && string(args) != "null" {
		if args[0] != '{' {
			return nil, fmt.Errorf("the arguments of %s.%s must be an object", server, tool)
		}
		params.Set("arguments", args)
	}
	res, err := h.e.o.Relay.CallTool(ctx, nil, relay.Call{
		Server: server, Tool: tool, Params: params,
		HostToken: progressToken,
		Progress:  func(json.RawMessage) { h.t.touch() },
		Host:      h.s.Host, SessionKey: h.s.SessionKey, Who: h.s.Who, Person: h.s.Person,
	})
	if err != nil {
		if c, ok := relay.CauseOf(err); ok && ctx.Err() == nil {
			return nil, fmt.Errorf("%s.%s: %s", server, tool, c.Error()) // its own timeout
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return nil, fmt.Errorf("%s.%s: %s", server, tool, rpcErr.Message)
		}
		return nil, fmt.Errorf("%s.%s: %w", server, tool, err)
	}
	return res, nil
}

// unwrap is what tools.<server>.<tool> resolves to: the result's
// structuredContent if it has one, else its text, else its content; a
// result with isError is an error with the tool's text.
func unwrap(server, tool string, res json.RawMessage) (json.RawMessage, error) {
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("%s.%s answered a result mcpx cannot read: %w", server, tool, err)
	}
	var text []string
	for _, c := range r.Content {
		if c.Type == "text" {
			text = append(text, c.Text)
		}
	}
	if r.IsError {
		msg := strings.Join(text, "\n")
		if msg == "" {
			msg = "the tool failed"
		}
		return nil, fmt.Errorf("%s.%s: %s", server, tool, msg)
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		return r.StructuredContent, nil
	}
	if len(text) > 0 || len(r.Content) == 0 {
		return jsonrpc.MustMarshal(strings.Join(text, "\n")), nil
	}
	obj, _ := jsonrpc.ParseObject(res)
	content, _ := obj.Get("content")
	return content, nil
}

// search is mcpx.search: the tools matching the words, each with how a
// script calls it. The query is bounded (catalog.MaxQueryBytes and
// MaxQueryWords), and the search ends when the script does.
func (h *host) search(ctx context.Context, query string, limit int) (json.RawMessage, error) {
	if limit <= 0 {
		limit = 10
	}
	type hit struct {
		Name        string          `json:"name"`
		Server      string          `json:"server"`
		Tool        string          `json:"tool"`
		Call        string          `json:"call"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	}
	snap := h.e.o.Catalog.Snapshot(ctx)
	hits := []hit{}
	n := limit
	if h.s.Allow != nil {
		n = len(snap.Tools) // the host's filter: search all, keep the allowed
	}
	found, err := snap.SearchContext(ctx, query, n)
	if err != nil {
		return nil, fmt.Errorf("mcpx.search: %w", err)
	}
	if h.s.Allow != nil {
		all := found
		found = nil
		for _, t := range all {
			if len(found) < limit && h.s.Allow(t.Server, t.Tool) == nil {
				found = append(found, t)
			}
		}
	}
	for _, t := range found {
		hits = append(hits, hit{Name: t.Name, Server: t.Server, Tool: t.Tool, Call: accessPath(t.Server, t.Tool),
			Description: t.Description, InputSchema: t.InputSchema()})
	}
	return json.Marshal(hits)
}

func (h *host) Notify(kind string, data json.RawMessage) {
	h.t.touch()
	if kind != "progress" || h.s.Progress == nil {
		return
	}
	var p struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  string   `json:"message"`
	}
	if json.Unmarshal(data, &p) != nil || p.Progress == nil || h.reported && *p.Progress <= h.last {
		return // the host must see progress increase
	}
	h.last, h.reported = *p.Progress, true
	h.s.Progress(*p.Progress, p.Total, cutMessage(p.Message))
}

// maxMessageBytes bounds a progress message in bytes, as the daemon
// checks it: the prelude's cut of MaxProgressMessage characters, with its
// note, is always within it.
const maxMessageBytes = 4*MaxProgressMessage + 64

// cutMessage cuts a progress message past maxMessageBytes, and says so:
// the prelude does, but what the child sends is not trusted.
func cutMessage(m string) string {
	if len(m) <= maxMessageBytes {
		return m
	}
	return fmt.Sprintf("%s … [cut: %d bytes in all]", strings.ToValidUTF8(m[:maxMessageBytes], ""), len(m))
}

func (h *host) Log(string) { h.t.touch() }
