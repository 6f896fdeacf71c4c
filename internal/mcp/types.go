package mcp

import "encoding/json"

// Implementation names a client or server (clientInfo, serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeParams are the parts of initialize's params mcpx reads.
type InitializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      Implementation  `json:"clientInfo"`
}

// InitializeResult is the reply to initialize.
type InitializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

// DiscoverResult is the reply to server/discover (2026-07-28).
type DiscoverResult struct {
	ResultType        string          `json:"resultType,omitempty"`
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
	Instructions      string          `json:"instructions,omitempty"`
	TTLMs             *int64          `json:"ttlMs,omitempty"`
	CacheScope        string          `json:"cacheScope,omitempty"`
}

// ProgressParams are the params of notifications/progress. Token keeps the
// sender's exact JSON.
type ProgressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// CancelledParams are the params of notifications/cancelled. RequestID is
// optional in 2025-11-25 (task cancellation uses tasks/cancel instead).
type CancelledParams struct {
	RequestID json.RawMessage `json:"requestId,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// Tool is the part of a tool definition mcpx reads for naming and search.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}
