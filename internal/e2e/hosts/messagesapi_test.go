package hosts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The part of Anthropic's Messages API (streamed) that the model stubs of
// real hosts (Claude Code, opencode) speak.

// messagesRequest is what a stub reads of a Messages API request.
type messagesRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// readMessages decodes a Messages API request. It answers a token count
// and a request it cannot read itself, and returns nil then.
func readMessages(w http.ResponseWriter, r *http.Request) *messagesRequest {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":1}`)
		return nil
	}
	var body messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "want a Messages API request", http.StatusBadRequest)
		return nil
	}
	return &body
}

// streamTurn answers with the assistant's turn as a stream of events: a
// call of tool (its arguments args, JSON; its id id), or when tool is ""
// the text "done".
func streamTurn(w http.ResponseWriter, model, tool, id, args string) {
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	event(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
	stop := "end_turn"
	if tool != "" {
		event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": id, "name": tool, "input": map[string]any{}}})
		event(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": args}})
		stop = "tool_use"
	} else {
		event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "done"}})
	}
	event(map[string]any{"type": "content_block_stop", "index": 0})
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	event(map[string]any{"type": "message_stop"})
}
