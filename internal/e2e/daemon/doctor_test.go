package daemon

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

type doctorReport struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Kind, Name, Level, Detail string
		Tools                     *int
		TookMs                    float64
	} `json:"checks"`
}

func runDoctor(t *testing.T, e *mcpxtest.Env, cfg string) (doctorReport, int) {
	t.Helper()
	out, stderr, code := e.Run(2*time.Minute, "doctor", "--config", cfg, "--json", "--timeout", "30s")
	var r doctorReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mcpx doctor --json: %v\n%s%s", err, out, stderr)
	}
	return r, code
}

func (r doctorReport) find(kind, name string) (level, detail string, tools *int) {
	for _, c := range r.Checks {
		if c.Kind == kind && (c.Name == name || strings.HasSuffix(c.Name, name)) {
			return c.Level, c.Detail, c.Tools
		}
	}
	return "", "", nil
}

// TestDoctor: doctor starts each server and lists its tools, says which
// host config points at this mcpx, finds a config others may write and
// a daemon of another build serving the same config; exit 0 only when
// nothing warns or fails.
func TestDoctor(t *testing.T) {
	t.Parallel()
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"}, mcpxtest.Demo{Name: "broken", Fields: map[string]any{"command": "/nonexistent/server", "args": []string{}}})
	if _, stderr, code := e.Run(30*time.Second, "install", "opencode", "--config", cfg); code != 0 {
		t.Fatalf("install: %s", stderr)
	}
	r, code := runDoctor(t, e, cfg)
	if code != 1 || r.OK {
		t.Errorf("a server that cannot start: exit %d ok %v, want 1 false", code, r.OK)
	}
	if level, detail, tools := r.find("server", "demo"); level != "ok" || tools == nil || *tools != len(harness.DemoToolNames) {
		t.Errorf("server demo: %s %s %v, want ok with %d tools", level, detail, tools, len(harness.DemoToolNames))
	}
	if level, detail, _ := r.find("server", "broken"); level != "fail" || !strings.Contains(detail, "/nonexistent/server") {
		t.Errorf("server broken: %s %q, want fail naming the command", level, detail)
	}
	if level, detail, _ := r.find("host", "opencode"); level != "ok" || !strings.Contains(detail, "runs this mcpx on stdio") {
		t.Errorf("host opencode: %s %q, want ok: runs this mcpx", level, detail)
	}
	if level, detail, _ := r.find("host", "codex"); level != "info" || !strings.Contains(detail, "no config at") {
		t.Errorf("host codex: %s %q, want info: no config", level, detail)
	}

	// A config others may write; then all well.
	cfg = e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	if err := os.Chmod(cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	r, code = runDoctor(t, e, cfg)
	if level, detail, _ := r.find("files", cfg); code != 1 || level != "fail" || !strings.Contains(detail, "others may change what mcpx runs") {
		t.Errorf("a config open to others: exit %d, %s %q", code, level, detail)
	}
	os.Chmod(cfg, 0o600)
	if r, code = runDoctor(t, e, cfg); code != 0 || !r.OK {
		t.Errorf("all well: exit %d, checks %+v", code, r.Checks)
	}

	// Another build of mcpx (a copy: another path is another build)
	// runs a daemon for the same config.
	other := filepath.Join(e.Dir, "mcpx-other")
	doctorCopyFile(t, e.Bin, other)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	daemon := e.Command(ctx, "daemon", "--config", cfg)
	daemon.Path, daemon.Args[0] = other, other
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { daemon.Wait(); close(done) }()
	defer func() {
		stop := e.Command(ctx, "stop", "--config", cfg)
		stop.Path, stop.Args[0] = other, other
		stop.Run()
		<-done
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, code = runDoctor(t, e, cfg)
		level, detail, _ := r.find("daemon", "")
		for _, c := range r.Checks {
			if c.Kind == "daemon" && c.Level == "warn" {
				level, detail = c.Level, c.Detail
			}
		}
		if level == "warn" {
			if code != 1 || !strings.Contains(detail, "another build") {
				t.Errorf("a daemon of another build: exit %d %q", code, detail)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor never saw the other build's daemon: %+v", r.Checks)
		}
		select {
		case <-done:
			t.Fatal("the other build's daemon exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func doctorCopyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
