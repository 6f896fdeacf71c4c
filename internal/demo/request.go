package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Reasons a request ends without a response, besides cancellation.
var (
	errIgnored = errors.New("server/discover ignored") // Options.IgnoreDiscover
	errExited  = errors.New("crash tool called Exit")  // recorded by the crash tool itself
)

// request is a request's params, read when its line arrives.
type request struct {
	msg    *jsonrpc.Message
	params *jsonrpc.Object // params' members; empty if absent or not an object
	meta   json.RawMessage // params._meta as sent; nil if absent
	obj    *jsonrpc.Object // params._meta's members; empty if absent
	token  json.RawMessage // params._meta.progressToken as sent; nil if absent
	name   string          // params.name of tools/call
	err    *jsonrpc.Error  // params are unusable: the request is answered with err
}

func parseRequest(m *jsonrpc.Message) *request {
	req := &request{msg: m, params: &jsonrpc.Object{}, obj: &jsonrpc.Object{}}
	params, err := jsonrpc.ParseObject(m.Params)
	if err != nil {
		req.err = invalidParams("params must be an object")
		return req
	}
	req.params = params
	if raw, ok := params.Get("_meta"); ok && string(raw) != "null" {
		obj, err := jsonrpc.ParseObject(raw)
		if err != nil {
			req.err = invalidParams("_meta must be an object")
			return req
		}
		req.meta, req.obj = raw, obj
		if tok, ok := obj.Get(mcp.MetaProgressToken); ok && string(tok) != "null" {
			if c := tok[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
				req.err = invalidParams("progressToken must be a string or a number")
				return req
			}
			req.token = tok
		}
	}
	if m.Method == mcp.MethodToolsCall {
		if raw, ok := params.Get("name"); ok && json.Unmarshal(raw, &req.name) != nil {
			req.err = invalidParams("tool name must be a string")
		}
	}
	return req
}

// dispatch serves one request by method and era. A result to a modern
// request carries "resultType":"complete".
func (s *server) dispatch(ctx context.Context, c *call, req *request) (json.RawMessage, error) {
	method := req.msg.Method
	if method == mcp.MethodDiscover && s.cfg.IgnoreDiscover {
		s.log.Info("ignoring server/discover", "id", c.id.String())
		return nil, errIgnored
	}
	if req.err != nil {
		return nil, req.err
	}
	modern, err := s.classify(req)
	if err != nil {
		return nil, err
	}
	var result json.RawMessage
	switch {
	case method == mcp.MethodInitialize:
		result, err = s.initialize(ctx, c, req)
	case method == mcp.MethodPing && !modern:
		result = json.RawMessage(`{}`)
	case method == mcp.MethodDiscover && s.cfg.Era != EraLegacy:
		result, err = s.discover(ctx)
	case method == mcp.MethodToolsList:
		result, err = s.listTools(req)
	case method == mcp.MethodToolsCall:
		result, err = s.callTool(ctx, c, req)
	case s.cfg.Tasks && modern && (method == mcp.MethodTasksGet || method == mcp.MethodTasksUpdate || method == mcp.MethodTasksCancel):
		return s.taskMethod(req) // results carry their own resultType
	case s.cfg.Surface && method == mcp.MethodResourcesList:
		result, err = s.listPaged(req, "resources", "resources", s.resources())
	case s.cfg.Surface && method == mcp.MethodResourceTemplatesList:
		result, err = s.listPaged(req, "resourceTemplates", "templates", s.templates())
	case s.cfg.Surface && method == mcp.MethodResourcesRead:
		result, err = s.readResource(req, modern)
	case s.cfg.Surface && !modern && (method == mcp.MethodResourcesSubscribe || method == mcp.MethodResourcesUnsubscribe):
		result, err = s.subscription(req, method == mcp.MethodResourcesSubscribe)
	case s.cfg.Surface && modern && method == mcp.MethodSubscriptionsListen:
		result, err = s.listen(ctx, c, req)
	case s.cfg.Surface && method == mcp.MethodPromptsList:
		result, err = s.listPaged(req, "prompts", "prompts", s.prompts())
	case s.cfg.Surface && method == mcp.MethodPromptsGet:
		result, err = s.getPrompt(req)
	case s.cfg.Surface && method == mcp.MethodCompletionComplete:
		result, err = s.complete(req)
	case s.cfg.Surface && !modern && method == mcp.MethodLoggingSetLevel:
		result, err = s.setLevel(req)
	default:
		err = jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", method)
	}
	if err != nil || !modern {
		return result, err
	}
	return complete(result), nil
}

// complete adds "resultType":"complete" to a result, leaving every other
// byte as it was.
func complete(result json.RawMessage) json.RawMessage {
	obj, err := jsonrpc.ParseObject(result)
	if err != nil {
		return result
	}
	if _, ok := obj.Get("resultType"); ok {
		return result // input_required, from the ask tool
	}
	obj.Set("resultType", json.RawMessage(`"`+mcp.ResultTypeComplete+`"`))
	return obj.Bytes()
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: "+format, args...)
}

// versionError is an error naming the supported versions in its data.
func versionError(code int64, requested string, supported []string, format string, args ...any) *jsonrpc.Error {
	data := marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{supported, requested})
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...), Data: data}
}
