package liveview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestLiveViewOpen: mcpx ui --open gives xdg-open (here a stand-in that
// records what it got) not the one-time link, which any local user reads
// on a command line, but a file: URL of a page readable by the user
// alone, in a directory only the user may enter, that leads to the link.
func TestLiveViewOpen(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
	e.StartHost(mcpxtest.Daemon, cfg).Initialize("2025-11-25")
	bin := e.Path("bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	args := e.Path("xdg-open.args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + args + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	cmd := e.Command(ctx, "ui", "--open", "--config", cfg)
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpx ui --open: %v", err)
	}
	link := strings.TrimSpace(string(out))
	_, token, ok := strings.Cut(link, "#t=")
	if !ok {
		t.Fatalf("mcpx ui printed %q, want a link with its token", link)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("xdg-open was not run: %v", err)
	}
	argv := strings.TrimSpace(string(got))
	if strings.Contains(argv, token) {
		t.Fatalf("xdg-open's command line holds the link's token: %q", argv)
	}
	target, err := harness.PageTarget(argv) // a file: URL of a 0600 page
	if err != nil {
		t.Fatal(err)
	}
	if target != link {
		t.Errorf("the page leads to %q, want the link %q", target, link)
	}
	dir := filepath.Dir(strings.TrimPrefix(argv, "file://"))
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(dir, e.Vars["XDG_RUNTIME_DIR"]) {
		t.Errorf("the page's directory %s: %v %v, want the runtime directory's, mode 0700", dir, fi.Mode(), err)
	}
}
