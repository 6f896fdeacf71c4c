package conformfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools the tasks-* scenarios (the tasks extension) name. They are
// plain tools: the fixture has no tasks of its own. A gateway in front of
// it (mcpx, configured to) makes them tasks.

// taskWork is how long the tools that must become tasks work before they
// answer or ask: longer than a gateway's wait before it makes a task.
const taskWork = time.Second

// askOrElicit asks the client the elicitations reqs: with input_required
// at 2026-07-28 (its retry carries the answers, returned), else one
// elicitation/create each. answers is nil when the call is to answer
// input_required: res is it.
func askOrElicit(ctx context.Context, req *mcp.CallToolRequest, reqs mcp.InputRequestMap) (answers map[string]*mcp.ElicitResult, res *mcp.CallToolResult, err error) {
	answers = map[string]*mcp.ElicitResult{}
	if modern(req) {
		for k := range reqs {
			r, ok := req.Params.InputResponses[k].(*mcp.ElicitResult)
			if !ok {
				return nil, need(reqs, ""), nil
			}
			answers[k] = r
		}
		return answers, nil, nil
	}
	for k, q := range reqs {
		r, err := req.Session.Elicit(ctx, q.(*mcp.ElicitParams))
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation %s: %w", k, err)
		}
		answers[k] = r
	}
	return answers, nil, nil
}

// addTaskTools adds the tools of the tasks-* scenarios.
func (f *Fixture) addTaskTools() {
	f.tool("greet", "Greets someone at once", stringArgs("name"), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("Hello, " + args(req)["name"] + "!"), nil
	})
	computeArgs := map[string]any{"type": "object", "properties": map[string]any{
		"seconds": map[string]any{"type": "number", "minimum": 0}, "label": map[string]any{"type": "string"}}}
	f.tool("slow_compute", "Works seconds seconds, then answers", computeArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Seconds float64 `json:"seconds"`
			Label   string  `json:"label"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &a)
		if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("computed %s in %gs", a.Label, a.Seconds)), nil
	})
	f.tool("failing_job", "Works a second, then reports a tool error", noArgs, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := sleep(ctx, taskWork); err != nil {
			return nil, err
		}
		r := text("the job failed: it was made to")
		r.IsError = true
		return r, nil
	})
	f.tool("protocol_error_job", "Works a second, then fails with a JSON-RPC error", noArgs, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := sleep(ctx, taskWork); err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job failed inside the server"}
	})
	f.tool("confirm_delete", "Works a second, asks to confirm, then deletes", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			if err := sleep(ctx, taskWork); err != nil {
				return nil, err
			}
		}
		ans, res, err := askOrElicit(ctx, req, mcp.InputRequestMap{"confirm": askName("Delete the file?", "confirm")})
		if ans == nil {
			return res, err
		}
		return text("delete: " + ans["confirm"].Action), nil
	})
	f.tool("multi_input", "Works a second, then asks two questions at once", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			if err := sleep(ctx, taskWork); err != nil {
				return nil, err
			}
		}
		ans, res, err := askOrElicit(ctx, req, mcp.InputRequestMap{
			"first": askName("First answer?", "value"), "second": askName("Second answer?", "value")})
		if ans == nil {
			return res, err
		}
		return text(fmt.Sprintf("first=%v second=%v", ans["first"].Content["value"], ans["second"].Content["value"])), nil
	})
	f.tool("test_tool_with_task", "Asks the user's name (input_required), then works a second and greets", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, ok := elicited(req.Params.InputResponses["user_name"], "name")
			if !ok {
				return need(mcp.InputRequestMap{"user_name": askName("What is your name?", "name")}, ""), nil
			}
			if err := sleep(ctx, taskWork); err != nil {
				return nil, err
			}
			return text("Hello, " + name + "! (the work ran as a task)"), nil
		})
}
