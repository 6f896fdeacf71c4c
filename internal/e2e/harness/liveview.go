package harness

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/mcpxtest"
)

// The live view is the daemon's alone (mcpx ui asks it for a link): these
// tests run against the daemon.

// UiLink returns a one-time link to the live view of cfg's daemon.
func UiLink(t *testing.T, e *mcpxtest.Env, cfg string) string {
	t.Helper()
	out, errOut, code := e.Run(WaitLong, "ui", "--config", cfg)
	if code != 0 {
		t.Fatalf("mcpx ui: exit %d: %s", code, errOut)
	}
	link := strings.TrimSpace(out)
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/ui/#t=") {
		t.Fatalf("mcpx ui printed %q, want a loopback one-time link", link)
	}
	return link
}

// WaitStatus polls the daemon's status until ok says it is as wanted.
func WaitStatus(t *testing.T, e *mcpxtest.Env, cfg, what string, ok func(apitype.Status) bool) {
	t.Helper()
	deadline := time.Now().Add(WaitLong)
	for {
		st := DaemonStatus(t, e, cfg)
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; status %+v", what, WaitLong, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
