package upstream

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// TestToolsListingShared: callers of Tools share one listing, and each can
// stop waiting for it on its own: one whose context ends returns at once
// even while another's listing is under way, and the listing goes on for
// the one that waits.
func TestToolsListingShared(t *testing.T) {
	release := make(chan struct{})
	var lists atomic.Int32
	var up *scripted
	up = newScripted(t, legacyScript("2025-11-25", "s1", func(w http.ResponseWriter, in *inbound) {
		if in.rpcMethod() == mcp.MethodToolsList {
			lists.Add(1)
			select { // the upstream is slow to list
			case <-release:
			case <-up.quit:
				return
			}
			replyJSON(w, 200, result(in, `{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`))
			return
		}
		replyJSON(w, 200, result(in, `{}`))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, nil)
	s := session(t, p)

	patient := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		tools, err := s.Tools(ctx)
		if err == nil && (len(tools) != 1 || tools[0].Name != "slow") {
			err = errors.New("wrong tools")
		}
		patient <- err
	}()
	up.waitFor("tools/list", isRPC(mcp.MethodToolsList))

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Tools(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("impatient caller: err = %v, want its deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the impatient caller waited %s behind the other's listing", took)
	}
	close(release)
	if err := <-patient; err != nil {
		t.Fatalf("patient caller: %v", err)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("the upstream was asked to list %d times, want 1 shared listing", n)
	}
}
