package harness

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
)

func CountDemoCancels(evs []demo.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Event == demo.EventCancelled {
			n++
		}
	}
	return n
}

// CheckGoSDKProgress checks the progress a host received for one call of the
// demo's export with total steps: each names the total, has a message
// exactly when withMessage, and the values increase strictly within
// 1..total.
func CheckGoSDKProgress(t *testing.T, notes []*mcp.ProgressNotificationParams, total int, withMessage bool) {
	t.Helper()
	if len(notes) > total {
		t.Errorf("%d progress notifications, want at most %d", len(notes), total)
	}
	prev := 0.0
	for _, n := range notes {
		if n.Total != float64(total) || n.Progress <= prev || n.Progress > float64(total) || (n.Message != "") != withMessage {
			t.Errorf("progress %+v after %v (total %d)", n, prev, total)
		}
		prev = n.Progress
	}
}

// ServeCommand is `mcpx serve` for cfg (with --in-process in that mode),
// as a go-sdk client's CommandTransport runs it.
func ServeCommand(e *mcpxtest.Env, mode mcpxtest.Mode, cfg string) *exec.Cmd {
	args := []string{"serve", "--config", cfg, "--log-level", "warn"}
	if mode == mcpxtest.InProcess {
		args = append(args, "--in-process")
	}
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.Environ()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// ConnectGoSDK spawns `mcpx serve` (with --in-process in that mode) as a
// go-sdk client's server and connects at version. The session is closed,
// and mcpx waited for, at cleanup.
func ConnectGoSDK(t testing.TB, e *mcpxtest.Env, mode mcpxtest.Mode, cfg, version string, prog *ProgressLog) *mcp.ClientSession {
	t.Helper()
	cmd := ServeCommand(e, mode, cfg)
	stderr := &GosdkStderr{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk", Version: "1"}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: prog.handle,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		t.Fatalf("connecting to mcpx serve (%s): %v\nstderr:\n%s", mode, err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the session (mcpx serve's exit): %v", err)
		}
		if s := stderr.String(); s != "" {
			t.Logf("mcpx serve stderr:\n%s", s)
		}
	})
	return cs
}

// ProgressLog keeps the progress notifications a go-sdk host received.
type ProgressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
	wake  chan struct{}
}

func NewProgressLog() *ProgressLog { return &ProgressLog{wake: make(chan struct{}, 1)} }

func (p *ProgressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.notes = append(p.notes, req.Params)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Of returns the notifications received for the string token tok.
func (p *ProgressLog) Of(tok string) []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, n := range p.notes {
		if s, ok := n.ProgressToken.(string); ok && s == tok {
			out = append(out, n)
		}
	}
	return out
}

// Wait waits until at least n notifications for tok arrived, and returns
// them.
func (p *ProgressLog) Wait(t *testing.T, tok string, n int, timeout time.Duration) []*mcp.ProgressNotificationParams {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if got := p.Of(tok); len(got) >= n {
			return got
		}
		select {
		case <-p.wake:
		case <-deadline.C:
			t.Fatalf("fewer than %d progress notifications for %q within %s; got %d", n, tok, timeout, len(p.Of(tok)))
		}
	}
}

// GosdkStderr is a bytes.Buffer safe for concurrent use.
type GosdkStderr struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *GosdkStderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *GosdkStderr) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
