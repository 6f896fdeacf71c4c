package daemon

import (
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestReload: the daemon applies an edited config without disturbing the
// calls of unchanged servers: a call on "keep" runs across the reload and
// returns its result; a call on "drop", removed by the edit, ends with an
// error saying so; "fresh", added, is listed and callable. A broken edit is
// refused (exit 2) and the running config stays.
func TestReload(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	keep := mcpxtest.Demo{Name: "keep"}
	cfg := e.WriteConfig(nil, keep, mcpxtest.Demo{Name: "drop"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	long := h.Request("tools/call", map[string]any{"name": "keep__export", "arguments": map[string]any{"seconds": 2, "steps": 4}})
	doomed := h.Request("tools/call", map[string]any{"name": "drop__wait", "arguments": map[string]any{"seconds": 30}})
	e.WaitRecord("drop", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == "request" && ev.Tool == "wait" })

	// A broken edit first: refused, nothing changes.
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"keep":{"command":"x"}},"mcpx":{"idleTimeot":"1s"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.Run(harness.WaitLong, "reload", "--config", cfg); code != 2 || !strings.Contains(stderr, "idleTimeot") {
		t.Fatalf("reload of a broken config: exit %d, stderr %q; want 2 naming the field", code, stderr)
	}
	if err := os.WriteFile(cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}

	e.WriteConfig(nil, keep, mcpxtest.Demo{Name: "fresh"})
	out, stderr, code := e.Run(harness.WaitLong, "reload", "--config", cfg)
	if code != 0 {
		t.Fatalf("reload: exit %d: %s %s", code, out, stderr)
	}
	for _, want := range []string{"added     fresh", "removed   drop", "unchanged keep"} {
		if !strings.Contains(out, want) {
			t.Errorf("reload output %q lacks %q", out, want)
		}
	}
	m := h.Response(doomed, harness.WaitLong)
	if m.Error == nil || !strings.Contains(m.Error.Message, `"drop" was removed from the config`) {
		t.Errorf("call on the removed server: got %s, want an error saying it was removed", m.Encode())
	}
	if res := h.Result(long, harness.WaitLong); !strings.Contains(string(res), "exported") {
		t.Errorf("call on the unchanged server: %s", res)
	}
	list := string(h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
	if !strings.Contains(list, `"fresh__echo"`) || strings.Contains(list, `"drop__`) {
		t.Errorf("tools after the reload: want fresh__ tools and no drop__ ones: %s", list)
	}
	h.Result(h.Request("tools/call", map[string]any{"name": "fresh__echo", "arguments": map[string]any{"n": 1}}), harness.WaitLong)
}

// TestReloadOnFileChange: the daemon notices an edited file by itself;
// `mcpx reload` afterwards still lists what the edit changed (the person
// who edited the file and asks hears about the edit, not "unchanged"),
// and the next one nothing more.
func TestReloadOnFileChange(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "one"})
	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-11-25")
	h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong)
	time.Sleep(20 * time.Millisecond) // a distinct modification time
	e.WriteConfig(nil, mcpxtest.Demo{Name: "one"}, mcpxtest.Demo{Name: "two"})
	deadline := time.Now().Add(harness.WaitLong)
	for {
		list := string(h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
		if strings.Contains(list, `"two__echo"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server two never appeared after the config file changed: %s", list)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, want := range [][]string{{"added     two", "unchanged one"}, {"added     -", "unchanged one, two"}} {
		out, stderr, code := e.Run(harness.WaitLong, "reload", "--config", cfg)
		if code != 0 {
			t.Fatalf("reload: exit %d: %s %s", code, out, stderr)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("reload output %q lacks %q", out, w)
			}
		}
	}
}
