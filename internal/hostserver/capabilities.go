package hostserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// capabilityWait bounds how long initialize and server/discover wait for
// upstreams to start, to learn what they serve. An upstream not started by
// then is left out of the capabilities (its tools are still listed and
// called as usual).
const capabilityWait = 5 * time.Second

// upstreamFeatures are the server capabilities beyond tools that at least
// one upstream declared.
type upstreamFeatures struct {
	resources, prompts, completions, logging bool
}

// features reports what the upstreams serve, from the capabilities each
// declared when it last started; one never started yet is started now
// (bounded by capabilityWait). A server stopped for being idle is not
// started again for this.
func (s *Server) features() upstreamFeatures {
	ctx, cancel := context.WithTimeout(context.Background(), capabilityWait)
	defer cancel()
	var mu sync.Mutex
	var f upstreamFeatures
	var wg sync.WaitGroup
	for _, name := range s.relay.Pool().Names() {
		wg.Go(func() {
			caps, err := s.relay.Pool().Capabilities(ctx, name)
			if err != nil {
				return
			}
			has := func(c string) bool { return upstream.HasCapability(caps, c) }
			mu.Lock()
			defer mu.Unlock()
			f.resources = f.resources || has("resources")
			f.prompts = f.prompts || has("prompts")
			f.completions = f.completions || has("completions")
			f.logging = f.logging || has("logging")
		})
	}
	wg.Wait()
	return f
}

// capabilities are what mcpx offers a host: tools always; resources,
// prompts, completions and logging when an upstream serves them. A legacy
// session may subscribe to resources and is told of list changes on its
// stream (stdio, or the GET stream of an HTTP session); a 2026-07-28 host subscribes and hears of
// list changes through subscriptions/listen. Logging is logging/setLevel for a legacy
// session, the per-request logLevel for 2026-07-28.
func (hs *hostSession) capabilities(modern bool) json.RawMessage {
	f := hs.srv.features()
	caps := &jsonrpc.Object{}
	caps.Set("tools", json.RawMessage(`{"listChanged":true}`))
	if f.resources {
		caps.Set("resources", json.RawMessage(`{"subscribe":true,"listChanged":true}`))
	}
	if f.prompts {
		caps.Set("prompts", json.RawMessage(`{"listChanged":true}`))
	}
	if f.completions {
		caps.Set("completions", json.RawMessage(`{}`))
	}
	if f.logging {
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
