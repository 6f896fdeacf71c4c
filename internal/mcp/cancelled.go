package mcp

import (
	"bytes"
	"encoding/json"

	"mcpx/internal/jsonrpc"
)

// CancelledRequestID returns the id a notifications/cancelled names (its
// requestId, as JSON text), and false if params name none: the request
// that will never be answered.
func CancelledRequestID(params json.RawMessage) (string, bool) {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return "", false
	}
	id, ok := obj.Get("requestId")
	if !ok {
		return "", false
	}
	return string(bytes.TrimSpace(id)), true
}
