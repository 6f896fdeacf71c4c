package hosts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/mcpxtest"
)

// stubLog is what a stub of a host's model API keeps: the mcpx tools the
// host offered the model in a round's requests that carried no tool
// result yet, and every tool result the host sent back.
type stubLog struct {
	mu      sync.Mutex
	tools   []string
	results []string
}

// saw records one request: the mcpx tools it offered and the results it
// carried.
func (l *stubLog) saw(tools, results []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(results) == 0 {
		for _, name := range tools {
			if !realHas(l.tools, name) {
				l.tools = append(l.tools, name)
			}
		}
	}
	l.results = append(l.results, results...)
}

// newRound forgets the tools offered so far.
func (l *stubLog) newRound() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tools = nil
}

func (l *stubLog) seen() (results, tools []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.results...), append([]string(nil), l.tools...)
}

func realHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// realRound is one real host's test, whose model is a stub on loopback
// that answers with one call of mcpx's demo__echo: after mcpx install,
// on stdio and then over HTTP, the host calls demo__echo through mcpx
// (the demo records the call) and hands its result back to the model; the
// tools it offers the model follow its tool filter, by clientInfo.name on
// stdio and by the name of the token install minted over HTTP; uninstall
// restores the host's file byte for byte.
type realRound struct {
	host    string // as mcpx install names it
	title   string // for messages: "Claude Code"
	bin     string // the host's executable
	args    []string
	install []string // install's arguments beyond HOST --config CFG
	// stdioName is the host's clientInfo.name; httpName its token's
	// name, passed to install --name unless it is install's default.
	stdioName, httpName string
	// file is the host's config file, seed what it holds before
	// install.
	file, seed string
	// tool is how the host names mcpx's demo tools: tool+"echo".
	tool string
	stub *stubLog
	// said is what the echo's result carries: the stub's call's text.
	said string
	// force reports whether uninstall needs --force, given the file as
	// install wrote it.
	force func(installed string) bool
	// slowStart, when set, makes the demo take that long to start: a
	// server slower than the host's own startup timer, which install
	// must have told the host to wait for.
	slowStart time.Duration
}

func runRealRound(t *testing.T, e *mcpxtest.Env, r realRound) {
	if err := os.MkdirAll(filepath.Dir(r.file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.file, []byte(r.seed), 0o600); err != nil {
		t.Fatal(err)
	}
	up := mcpxtest.Demo{Name: "demo"}
	if r.slowStart > 0 {
		slow := e.Path("slow-mcpx")
		script := fmt.Sprintf("#!/bin/sh\nsleep %g\nexec %q \"$@\"\n", r.slowStart.Seconds(), e.Bin)
		if err := os.WriteFile(slow, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		up.Fields = map[string]any{"command": slow}
	}
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + realFreePort(t)},
		"hosts": map[string]any{
			r.stdioName: map[string]any{"tools": []string{"!demo__wait"}},
			r.httpName:  map[string]any{"tools": []string{"!demo__scan"}},
		},
	}, up)
	realStartDaemon(t, e, cfg, e.Path("daemon.log"))

	for i, way := range []string{"stdio", "http"} {
		args := append([]string{"install", r.host, "--config", cfg}, r.install...)
		if way == "http" {
			args = append(args, "--http")
			if r.httpName != r.host {
				args = append(args, "--name", r.httpName)
			}
		}
		if out, stderr, code := e.Run(30*time.Second, args...); code != 0 {
			t.Fatalf("%s: mcpx %v: exit %d\n%s%s", way, args, code, out, stderr)
		}
		installed := realReadFile(t, r.file)
		r.stub.newRound()
		out := runRealHost(t, e, r.bin, e.Vars["HOME"], r.args...)
		calls := 0
		for _, ev := range e.Records("demo") {
			if ev.Method == "tools/call" && ev.Tool == "echo" && ev.Event == demo.EventRequest {
				calls++
			}
		}
		results, tools := r.stub.seen()
		if calls != i+1 {
			t.Errorf("%s: the demo saw %d echo calls, want %d:\n%s", way, calls, i+1, out)
		}
		if len(results) != i+1 || !strings.Contains(results[i], r.said) {
			t.Errorf("%s: %s handed the model the tool results %q, want the echo's:\n%s", way, r.title, results, out)
		}
		refused, kept := r.tool+"wait", r.tool+"scan"
		if way == "http" {
			refused, kept = kept, refused
		}
		if !realHas(tools, r.tool+"echo") || !realHas(tools, kept) || realHas(tools, refused) {
			t.Errorf("%s: %s offered %v, want %secho and %s, not %s (the host's tool filter)", way, r.title, tools, r.tool, kept, refused)
		}
		un := []string{"uninstall", r.host}
		if r.force != nil && r.force(installed) {
			un = append(un, "--force")
		}
		if out, stderr, code := e.Run(30*time.Second, un...); code != 0 {
			t.Fatalf("%s: uninstall: %s%s", way, out, stderr)
		}
		if got := realReadFile(t, r.file); got != r.seed {
			t.Errorf("%s: uninstall did not restore %s byte for byte:\n%s", way, r.file, got)
		}
	}
}
