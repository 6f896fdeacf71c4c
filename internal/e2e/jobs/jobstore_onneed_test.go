package jobs

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// A gateway of its own (serve --in-process) opens the job store when a
// job first needs it: a host that makes plain calls leaves it closed (the
// file is not even made), a background call opens it and is a job as
// ever.
func TestServeOpensJobStoreOnNeed(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	db := mcpxtest.InProcessFiles(e).Jobs
	h := e.StartHost(mcpxtest.InProcess, cfg)
	h.Initialize("2025-11-25")
	for range 3 {
		h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}}), harness.RelayWait)
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after plain calls, the job store: %v; want it never opened (no file)", err)
	}
	call := map[string]any{"name": "mcpx_call", "arguments": map[string]any{
		"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0, "text": "exported"}, "background": true}}
	job := harness.JobOf(t, h.Result(h.Request("tools/call", call), harness.RelayWait))
	res := h.Result(h.Request("tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": job.JobID, "wait_seconds": 20}}), harness.RelayWait)
	if got := harness.FirstText(t, res); got != "exported" {
		t.Fatalf("mcpx_job result %s", res)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("after a background call, the job store: %v", err)
	}
}

// A job store that cannot be opened fails the first call that needs it,
// saying why; plain calls go on as before.
func TestServeJobStoreCannotOpen(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	if err := os.Mkdir(mcpxtest.InProcessFiles(e).Jobs, 0o700); err != nil { // a directory: no SQLite file
		t.Fatal(err)
	}
	h := e.StartHost(mcpxtest.InProcess, cfg)
	h.Initialize("2025-11-25")
	call := map[string]any{"name": "mcpx_call", "arguments": map[string]any{
		"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0, "text": "exported"}, "background": true}}
	msg := h.Response(h.Request("tools/call", call), harness.RelayWait)
	raw := string(msg.Result)
	if msg.Error != nil {
		raw += msg.Error.Message
	}
	if !strings.Contains(raw, "opening the job store failed") {
		t.Fatalf("a background call over a job store that cannot open: %s; want it to say so", raw)
	}
	h.Result(h.Request("tools/call", map[string]any{"name": "demo__echo", "arguments": map[string]any{}}), harness.RelayWait)
}
