package mcp

import "encoding/json"

// ElicitationMode returns an elicitation/create's mode ("form" if its
// params name none), "" for any other request.
func ElicitationMode(method string, params json.RawMessage) string {
	if method != MethodElicitationCreate {
		return ""
	}
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Mode == "" {
		return "form"
	}
	return p.Mode
}

// URLElicitationID returns the elicitationId of a 2025-11-25 URL-mode
// elicitation/create, "" for any other request.
func URLElicitationID(method string, params json.RawMessage) string {
	if ElicitationMode(method, params) != "url" {
		return ""
	}
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ElicitationID
}
