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

// The surface beyond tools, served with [Options.Surface]: resources (with
// subscriptions and list changes), a resource template, prompts,
// completion and logging. URIs are demo://<ResourceHost>/..., except
// demo://shared/motd, which every demo serves (two demos behind one
// gateway collide on it).

// surfaceCapabilities are the capabilities the surface adds.
const surfaceCapabilities = `"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"completions":{},"logging":{}`

// logLevels are MCP's log levels, most verbose first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (s *server) resourceHost() string {
	if s.cfg.ResourceHost != "" {
		return s.cfg.ResourceHost
	}
	return "demo"
}

// resources are the listed resources, in order.
func (s *server) resources() []json.RawMessage {
	h := s.resourceHost()
	out := []json.RawMessage{
		marshal(map[string]string{"uri": "demo://" + h + "/readme", "name": "readme", "title": "Read me", "mimeType": "text/plain"}),
		marshal(map[string]string{"uri": "demo://" + h + "/config.json", "name": "config", "mimeType": "application/json"}),
		marshal(map[string]string{"uri": "demo://shared/motd", "name": "motd", "mimeType": "text/plain"}),
	}
	if s.grown() {
		out = append(out, marshal(map[string]string{"uri": "demo://" + h + "/extra", "name": "extra", "mimeType": "text/plain"}))
	}
	return out
}

func (s *server) grown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.surfaceGrown
}

// resourceText is the text of a URI the demo can read, and whether it can.
func (s *server) resourceText(uri string) (string, string, bool) {
	h := s.resourceHost()
	switch uri {
	case "demo://" + h + "/readme":
		return "text/plain", "The demo's read-me, served by " + h + ".", true
	case "demo://" + h + "/config.json":
		return "application/json", `{"host":` + string(marshal(h)) + `,"big":12345678901234567890}`, true
	case "demo://shared/motd":
		return "text/plain", "Message of the day from " + h + ".", true
	case "demo://" + h + "/extra":
		if s.grown() {
			return "text/plain", "An extra resource.", true
		}
	}
	if id, ok := strings.CutPrefix(uri, "demo://"+h+"/items/"); ok && id != "" && !strings.Contains(id, "/") {
		return "text/plain", "Item " + id + " of " + h + ".", true
	}
	return "", "", false
}

// listPaged answers a list of items, paged by Options.PageSize.
func (s *server) listPaged(req *request, field, kind string, items []json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(req.msg.Params, &p)
	start := 0
	if p.Cursor != nil {
		b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		rest, ok := strings.CutPrefix(string(b), "mcpx-demo/"+kind+"/")
		n, err2 := strconv.Atoi(rest)
		if err != nil || !ok || err2 != nil || n <= 0 || n >= len(items) {
			return nil, invalidParams("invalid cursor %q", *p.Cursor)
		}
		start = n
	}
	end := len(items)
	if s.cfg.PageSize > 0 {
		end = min(start+s.cfg.PageSize, end)
	}
	res := &jsonrpc.Object{}
	res.Set(field, marshal(items[start:end]))
	if end < len(items) {
		res.Set("nextCursor", marshal(base64.RawURLEncoding.EncodeToString([]byte("mcpx-demo/"+kind+"/"+strconv.Itoa(end)))))
	}
	return res.Bytes(), nil
}

func (s *server) templates() []json.RawMessage {
	return []json.RawMessage{marshal(map[string]string{
		"uriTemplate": "demo://" + s.resourceHost() + "/items/{id}", "name": "item", "mimeType": "text/plain",
		"description": "One item by id; completion suggests ids.",
	})}
}

// readResource answers resources/read: unknown URIs are -32002 in the
// legacy revisions and -32602 in 2026-07-28, with the URI in data.
func (s *server) readResource(req *request, modern bool) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil || p.URI == "" {
		return nil, invalidParams("resources/read needs a uri")
	}
	mime, text, ok := s.resourceText(p.URI)
	if !ok {
		code := int64(mcp.CodeResourceNotFound)
		if modern {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: "Resource not found", Data: marshal(map[string]string{"uri": p.URI})}
	}
	return marshal(map[string]any{"contents": []map[string]string{{"uri": p.URI, "mimeType": mime, "text": text}}}), nil
}

// subscription answers resources/subscribe and unsubscribe (legacy).
func (s *server) subscription(req *request, on bool) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil || p.URI == "" {
		return nil, invalidParams("%s needs a uri", req.msg.Method)
	}
	s.mu.Lock()
	if s.subscribed == nil {
		s.subscribed = map[string]bool{}
	}
	if on {
		s.subscribed[p.URI] = true
	} else {
		delete(s.subscribed, p.URI)
	}
	s.mu.Unlock()
	return json.RawMessage(`{}`), nil
}

func (s *server) prompts() []json.RawMessage {
	out := []json.RawMessage{
		json.RawMessage(`{"name":"greet","title":"Greet someone","description":"A greeting for name.","arguments":[{"name":"name","description":"Who to greet","required":true}]}`),
		json.RawMessage(`{"name":"plain","description":"A prompt without arguments."}`),
	}
	if s.grown() {
		out = append(out, json.RawMessage(`{"name":"extra","description":"A prompt that appeared later."}`))
	}
	return out
}

// getPrompt answers prompts/get; an unknown prompt or a missing required
// argument is -32602.
func (s *server) getPrompt(req *request) (json.RawMessage, error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil {
		return nil, invalidParams("prompts/get: bad params")
	}
	text := ""
	switch {
	case p.Name == "greet":
		if p.Arguments["name"] == "" {
			return nil, invalidParams("prompt greet needs the argument name")
		}
		text = "Say hello to " + p.Arguments["name"] + " from " + s.resourceHost() + "."
	case p.Name == "plain":
		text = "A plain prompt from " + s.resourceHost() + "."
	case p.Name == "extra" && s.grown():
		text = "The extra prompt."
	default:
		return nil, invalidParams("Unknown prompt: %s", p.Name)
	}
	return marshal(map[string]any{"description": "from " + s.resourceHost(), "messages": []any{
		map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}},
	}}), nil
}

// complete answers completion/complete for greet's name and the item
// template's id.
func (s *server) complete(req *request) (json.RawMessage, error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil {
		return nil, invalidParams("completion/complete: bad params")
	}
	var all []string
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "name":
		all = []string{"alice", "albert", "bob"}
	case p.Ref.Type == "ref/resource" && p.Ref.URI == "demo://"+s.resourceHost()+"/items/{id}" && p.Argument.Name == "id":
		all = []string{"1", "2", "10", "42"}
	case p.Ref.Type == "ref/prompt" && p.Ref.Name != "greet" && p.Ref.Name != "plain":
		return nil, invalidParams("Unknown prompt: %s", p.Ref.Name)
	}
	values := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, p.Argument.Value) {
			values = append(values, v)
		}
	}
	return marshal(map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}}), nil
}

// setLevel answers logging/setLevel (legacy).
func (s *server) setLevel(req *request) (json.RawMessage, error) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(req.msg.Params, &p) != nil || !slices.Contains(logLevels, p.Level) {
		return nil, invalidParams("unknown log level")
	}
	s.mu.Lock()
	s.logLevel = p.Level
	s.mu.Unlock()
	return json.RawMessage(`{}`), nil
}

// logAdmits reports whether a message at level goes out for req: a
// 2026-07-28 request says its level in _meta (none: no messages), a
// legacy one follows logging/setLevel (none set: every message).
func (s *server) logAdmits(req *request, level string) bool {
	min := ""
	if _, modern := req.obj.Get(mcp.MetaProtocolVersion); modern {
		if l, ok := mcp.MetaString(req.obj, mcp.MetaLogLevel); ok {
			min = l
		} else {
			return false
		}
	} else {
		s.mu.Lock()
		min = s.logLevel
		s.mu.Unlock()
	}
	return min == "" || slices.Index(logLevels, level) >= slices.Index(logLevels, min)
}

// The surface's tools.
var surfaceTools = []tool{{"log", runLog}, {"touch", runTouch}}

// runLog works silently for after seconds, then sends notifications/message
// at each level asked, before its result, on the call's own stream; the
// result says which went out.
func runLog(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	var a struct {
		Levels  []string `json:"levels"`
		Message string   `json:"message"`
		After   float64  `json:"after"`
	}
	if len(t.args) > 0 {
		if err := json.Unmarshal(t.args, &a); err != nil {
			return errorResult("log: %v", err), nil
		}
	}
	if err := checkSeconds("after", a.After); err != nil {
		return errorResult("log: %v", err), nil
	}
	if err := sleep(ctx, seconds(a.After)); err != nil {
		return nil, err
	}
	var sent []string
	for _, l := range a.Levels {
		if !slices.Contains(logLevels, l) {
			return errorResult("log: unknown level %q", l), nil
		}
		if !t.s.logAdmits(t.req, l) {
			continue
		}
		t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodMessage, marshal(map[string]any{
			"level": l, "logger": "demo", "data": fmt.Sprintf("%s: %s", l, a.Message)})))
		sent = append(sent, l)
	}
	return textResult("sent: " + strings.Join(sent, ",")), nil
}

// runTouch sends notifications/resources/updated for a subscribed uri,
// with endListens ends every subscriptions/listen (listen.go), and with
// grow adds a resource and a prompt and says both lists changed.
func runTouch(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	var a struct {
		URI        string `json:"uri"`
		Grow       bool   `json:"grow"`
		EndListens bool   `json:"endListens"`
	}
	if len(t.args) > 0 {
		if err := json.Unmarshal(t.args, &a); err != nil {
			return errorResult("touch: %v", err), nil
		}
	}
	var did []string
	if a.URI != "" {
		t.s.mu.Lock()
		sub := t.s.subscribed[a.URI]
		listens := t.s.listensForLocked(a.URI)
		t.s.mu.Unlock()
		for _, l := range listens {
			sub = t.s.updated(l, a.URI) || sub
		}
		if len(listens) == 0 && sub {
			t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodResourcesUpdated, marshal(map[string]string{"uri": a.URI})))
		}
		if sub {
			did = append(did, "updated "+a.URI)
		} else {
			did = append(did, "not subscribed: "+a.URI)
		}
	}
	if a.EndListens {
		t.s.mu.Lock()
		n := t.s.endListensLocked()
		t.s.mu.Unlock()
		did = append(did, fmt.Sprintf("ended %d listens", n))
	}
	if a.Grow {
		t.s.mu.Lock()
		t.s.surfaceGrown = true
		t.s.mu.Unlock()
		t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodResourcesListChanged, nil))
		t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodPromptsListChanged, nil))
		did = append(did, "grew")
	}
	return textResult(strings.Join(did, "; ")), nil
}
