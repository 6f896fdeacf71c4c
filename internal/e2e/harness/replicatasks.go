package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/sse"
)

// TasksExt is the _meta that makes a 2026-07-28 request take tasks.
var TasksExt = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
	"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}

// ModernRequest is a 2026-07-28 request body that takes tasks, and its
// headers.
func ModernRequest(id any, method, name string, params map[string]any) (string, map[string]string) {
	params["_meta"] = ModernMeta(TasksExt)
	return JsonText(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}), ModernHeaders(method, name)
}

// PostMCP posts one request to url with token and returns its answer
// (the last message of an SSE stream): safe to call from any goroutine.
func PostMCP(ctx context.Context, hc *http.Client, url, token, body string, hdr map[string]string) (*jsonrpc.Message, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	var last []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rd := sse.NewReader(resp.Body, 16<<20)
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			last = bytes.Clone(ev.Data)
		}
	} else if last, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	if len(last) == 0 {
		return nil, errors.New("an answer with no message")
	}
	return jsonrpc.Decode(last)
}
