package conformfixture

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The input_required tools of SEP-2322 (multi round-trip requests): the
// first round answers with inputRequests, the retry carries
// inputResponses (and the requestState, signed by the fixture).

func askName(msg, field string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{field: map[string]any{"type": "string"}}, "required": []string{field},
	}}
}

func askSampling(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
		MaxTokens: maxTokens,
	}
}

// sign returns the requestState carrying state, with its HMAC.
func (f *Fixture) sign(state string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(state))
	return base64.RawURLEncoding.EncodeToString([]byte(state)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// verify returns the state a requestState carries, or -32602 if it is not
// one the fixture signed.
func (f *Fixture) verify(rs string) (string, error) {
	body, mac, ok := strings.Cut(rs, ".")
	state, err1 := base64.RawURLEncoding.DecodeString(body)
	sum, err2 := base64.RawURLEncoding.DecodeString(mac)
	if ok && err1 == nil && err2 == nil {
		m := hmac.New(sha256.New, f.key)
		m.Write(state)
		if hmac.Equal(sum, m.Sum(nil)) {
			return string(state), nil
		}
	}
	return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed its integrity check"}
}

// elicited returns the string field of an elicitation response.
func elicited(r mcp.InputResponse, field string) (string, bool) {
	e, ok := r.(*mcp.ElicitResult)
	if !ok || e.Action != "accept" {
		return "", false
	}
	s, ok := e.Content[field].(string)
	return s, ok
}

// sampled returns the text of a sampling response (the SDK decodes it as
// either result type).
func sampled(r mcp.InputResponse) (string, bool) {
	var content []mcp.Content
	switch c := r.(type) {
	case *mcp.CreateMessageResult:
		content = []mcp.Content{c.Content}
	case *mcp.CreateMessageWithToolsResult:
		content = c.Content
	default:
		return "", false
	}
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "", false
}

func rootsOf(r mcp.InputResponse) ([]string, bool) {
	l, ok := r.(*mcp.ListRootsResult)
	if !ok {
		return nil, false
	}
	var out []string
	for _, root := range l.Roots {
		out = append(out, root.URI)
	}
	return out, true
}

func need(reqs mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

// addInputRequiredTools adds the tools and the prompt of the
// input-required-result-* scenarios.
func (f *Fixture) addInputRequiredTools() {
	f.tool("test_input_required_result_elicitation", "Asks the user's name (input_required), then greets", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := elicited(req.Params.InputResponses["user_name"], "name"); ok {
				return text("Hello, " + name + "!"), nil
			}
			return need(mcp.InputRequestMap{"user_name": askName("What is your name?", "name")}, ""), nil
		})
	f.tool("test_input_required_result_sampling", "Asks the client's LLM (input_required)", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if s, ok := sampled(req.Params.InputResponses["capital_question"]); ok {
				return text("The model answered: " + s), nil
			}
			return need(mcp.InputRequestMap{"capital_question": askSampling("What is the capital of France?", 100)}, ""), nil
		})
	f.tool("test_input_required_result_list_roots", "Asks the client's roots (input_required)", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if roots, ok := rootsOf(req.Params.InputResponses["client_roots"]); ok {
				return text(fmt.Sprintf("Client roots: %s", strings.Join(roots, ", "))), nil
			}
			return need(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, ""), nil
		})
	f.tool("test_input_required_result_request_state", "Round-trips a signed requestState", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			if r, ok := p.InputResponses["confirm"]; ok && p.RequestState != "" {
				state, err := f.verify(p.RequestState)
				if err != nil {
					return nil, err
				}
				if _, ok := r.(*mcp.ElicitResult); ok && state == "confirm" {
					return text("state-ok: the requestState came back intact"), nil
				}
			}
			return need(mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"},
			}}}, f.sign("confirm")), nil
		})
	f.tool("test_input_required_result_tampered_state", "Rejects a requestState it did not sign", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			if p.RequestState != "" {
				if _, err := f.verify(p.RequestState); err != nil {
					return nil, err
				}
				if _, ok := p.InputResponses["confirm"]; ok {
					return text("state-ok"), nil
				}
			}
			return need(mcp.InputRequestMap{"confirm": askName("Please confirm", "ok")}, f.sign("tamper-check")), nil
		})
	f.tool("test_input_required_result_multiple_inputs", "Asks for an elicitation, a sampling and the roots at once", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			name, ok1 := elicited(p.InputResponses["user_name"], "name")
			greeting, ok2 := sampled(p.InputResponses["greeting"])
			roots, ok3 := rootsOf(p.InputResponses["client_roots"])
			if ok1 && ok2 && ok3 && p.RequestState != "" {
				if _, err := f.verify(p.RequestState); err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("name=%s greeting=%s roots=%s", name, greeting, strings.Join(roots, ","))), nil
			}
			return need(mcp.InputRequestMap{
				"user_name":    askName("What is your name?", "name"),
				"greeting":     askSampling("Generate a greeting", 50),
				"client_roots": &mcp.ListRootsParams{},
			}, f.sign("multiple")), nil
		})
	f.tool("test_input_required_result_multi_round", "Two rounds of input, the requestState evolving", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			state := ""
			if p.RequestState != "" {
				s, err := f.verify(p.RequestState)
				if err != nil {
					return nil, err
				}
				state = s
			}
			if color, ok := elicited(p.InputResponses["step2"], "color"); ok && strings.HasPrefix(state, "round-2:") {
				return text(fmt.Sprintf("%s likes %s", strings.TrimPrefix(state, "round-2:"), color)), nil
			}
			if name, ok := elicited(p.InputResponses["step1"], "name"); ok && state == "round-1" {
				return need(mcp.InputRequestMap{"step2": askName("Step 2: What is your favorite color?", "color")}, f.sign("round-2:"+name)), nil
			}
			return need(mcp.InputRequestMap{"step1": askName("Step 1: What is your name?", "name")}, f.sign("round-1")), nil
		})
	f.tool("test_input_required_result_capabilities", "Asks only for what the client declared it can answer", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Params
			if len(p.InputResponses) > 0 {
				keys := make([]string, 0, len(p.InputResponses))
				for k := range p.InputResponses {
					keys = append(keys, k)
				}
				b, _ := json.Marshal(keys)
				return text("Received input responses: " + string(b)), nil
			}
			c := req.ClientCapabilities()
			reqs := mcp.InputRequestMap{}
			if c != nil && c.Sampling != nil {
				reqs["sampling"] = askSampling("Say hello", 20)
			}
			if c != nil && c.Elicitation != nil {
				reqs["elicitation"] = askName("What is your name?", "name")
			}
			if len(reqs) == 0 {
				return text("The client declared neither sampling nor elicitation: nothing to ask"), nil
			}
			return need(reqs, ""), nil
		})
	f.srv.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context (input_required) before it answers"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c, ok := elicited(req.Params.InputResponses["user_context"], "context"); ok {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Context: " + c}}}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": askName("What context should the prompt use?", "context")}}, nil
		})
}
