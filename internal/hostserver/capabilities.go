package hostserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
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

// features starts every upstream (bounded by capabilityWait) and reports
// what they serve.
func (s *Server) features() upstreamFeatures {
	ctx, cancel := context.WithTimeout(context.Background(), capabilityWait)
	defer cancel()
	var mu sync.Mutex
	var f upstreamFeatures
	var wg sync.WaitGroup
	for _, name := range s.relay.Pool().Names() {
		wg.Go(func() {
			sess, err := s.relay.Pool().Session(ctx, name)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			f.resources = f.resources || sess.HasCapability("resources")
			f.prompts = f.prompts || sess.HasCapability("prompts")
			f.completions = f.completions || sess.HasCapability("completions")
			f.logging = f.logging || sess.HasCapability("logging")
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
	return caps.Bytes()
}
