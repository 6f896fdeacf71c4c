package hostserver

import (
	"encoding/json"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
)

// capabilities are what mcpx offers a host: tools always; resources,
// prompts, completions and logging when an upstream serves them. A legacy
// session may subscribe to resources and is told of list changes on its
// stream (stdio, or the GET stream of an HTTP session); a 2026-07-28 host subscribes and hears of
// list changes through subscriptions/listen. Logging is logging/setLevel for a legacy
// session, the per-request logLevel for 2026-07-28.
func (hs *hostSession) capabilities(modern bool) json.RawMessage {
	f := hs.srv.surface.Features()
	caps := &jsonrpc.Object{}
	caps.Set("tools", json.RawMessage(`{"listChanged":true}`))
	if f.Resources {
		caps.Set("resources", json.RawMessage(`{"subscribe":true,"listChanged":true}`))
	}
	if f.Prompts {
		caps.Set("prompts", json.RawMessage(`{"listChanged":true}`))
	}
	if f.Completions {
		caps.Set("completions", json.RawMessage(`{}`))
	}
	if f.Logging {
		caps.Set("logging", json.RawMessage(`{}`))
	}
	if modern && hs.srv.opts.Jobs != nil {
		caps.Set("extensions", hostjobs.TasksExtension)
	}
	if !modern {
		hs.mu.Lock()
		version := hs.version
		hs.mu.Unlock()
		if hs.srv.legacyTasks(version) {
			caps.Set("tasks", hostjobs.TasksCapability)
		}
	}
	return caps.Bytes()
}
