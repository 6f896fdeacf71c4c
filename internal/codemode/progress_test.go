package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/relay"
)

// TestProgressMessageCut: a script's progress() message of 30 MB reaches
// the host cut to MaxProgressMessage characters, ending with a note that
// says so; a short one is untouched.
func TestProgressMessageCut(t *testing.T) {
	e, _ := testEngine(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []string
	out, err := e.Exec(ctx, Script{Code: `progress(1, 3, "short"); progress(2, 3, "m".repeat(30e6)); progress(3, 3, "é".repeat(5000)); return 1`,
		Progress: func(_ float64, _ *float64, message string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, message)
		}})
	if err != nil || out.Err != nil {
		t.Fatalf("%v, %v", out.Err, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "short" {
		t.Fatalf("progress messages %.200q", got)
	}
	for i, want := range []string{strings.Repeat("m", 1024) + " … [cut: 30000000 characters in all]", strings.Repeat("é", 1024) + " … [cut: 5000 characters in all]"} {
		if got[i+1] != want {
			t.Errorf("message %d: %d bytes %.80q…, want %d bytes", i+1, len(got[i+1]), got[i+1], len(want))
		}
	}
}

// TestProgressMessageCutInDaemon: a progress message past the daemon's
// bound from a child that does not cut it is cut, and says so.
func TestProgressMessageCutInDaemon(t *testing.T) {
	var got string
	h := &host{s: &Script{Progress: func(_ float64, _ *float64, m string) { got = m }}, t: startTimers(time.Minute, time.Minute, func(*relay.Cause) {})}
	defer h.t.stop()
	data, _ := json.Marshal(map[string]any{"progress": 1, "message": strings.Repeat("m", 1<<20)})
	h.Notify("progress", data)
	if want := strings.Repeat("m", maxMessageBytes) + " … [cut: 1048576 bytes in all]"; got != want {
		t.Errorf("message of %d bytes, want %d", len(got), len(want))
	}
}
