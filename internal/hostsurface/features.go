package hostsurface

import (
	"context"
	"sync"
	"time"

	"mcpx/internal/upstream"
)

// capabilityWait bounds how long initialize and server/discover wait for
// upstreams to start, to learn what they serve. An upstream not started by
// then is left out of the capabilities (its tools are still listed and
// called as usual).
const capabilityWait = 5 * time.Second

// Features are the server capabilities beyond tools that at least one
// upstream declared.
type Features struct {
	Resources, Prompts, Completions, Logging bool
}

// Features reports what the upstreams serve, from the capabilities each
// declared when it last started; one never started yet is started now
// (bounded by capabilityWait). A server stopped for being idle is not
// started again for this.
func (s *Surface) Features() Features {
	ctx, cancel := context.WithTimeout(context.Background(), capabilityWait)
	defer cancel()
	var mu sync.Mutex
	var f Features
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
			f.Resources = f.Resources || has("resources")
			f.Prompts = f.Prompts || has("prompts")
			f.Completions = f.Completions || has("completions")
			f.Logging = f.Logging || has("logging")
		})
	}
	wg.Wait()
	return f
}
