package mcpxtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/demo"
	"mcpx/internal/localclient"
	"mcpx/internal/sock"
)

// RaceQuickExit is the GORACE value that spares a race-enabled mcpx
// process the race runtime's 1 s sleep at exit (every test starts and ends
// several), keeping the caller's own options.
var RaceQuickExit = strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")

// Env is one test's private mcpx installation: XDG directories under a
// short temp dir (unix socket paths are limited to 107 bytes).
type Env struct {
	T    testing.TB
	Dir  string
	Bin  string
	Vars map[string]string // XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR, HOME
}

// NewEnv makes a private installation. At cleanup it stops any daemon the
// test started, so no process outlives the test.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	dir, err := os.MkdirTemp("", "mx")
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Dir: dir, Bin: Binary(t), Vars: map[string]string{"GORACE": RaceQuickExit}}
	for k, sub := range map[string]string{"XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "s", "XDG_RUNTIME_DIR": "r", "HOME": "h"} {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		e.Vars[k] = p
	}
	t.Cleanup(func() {
		e.StopDaemons()
		if t.Failed() {
			e.dumpDaemonLogs()
		}
		os.RemoveAll(dir)
	})
	return e
}

// Environ returns the process environment with this installation's
// directories.
func (e *Env) Environ() []string {
	out := os.Environ()
	for k, v := range e.Vars {
		out = append(out, k+"="+v)
	}
	return out
}

// Lookup reads the installation's environment (for in-process code).
func (e *Env) Lookup(k string) (string, bool) {
	if v, ok := e.Vars[k]; ok {
		return v, true
	}
	return os.LookupEnv(k)
}

// Path returns a path inside the installation's directory.
func (e *Env) Path(name string) string { return filepath.Join(e.Dir, name) }

// Demo describes one demo upstream in a config.
type Demo struct {
	Name string
	Args []string // demo flags, e.g. "-era", "legacy"
	// Extra server fields, e.g. "idleTimeout": "1s".
	Fields map[string]any
}

// RecordPath is the record file of demo server name in e.
func (e *Env) RecordPath(name string) string { return e.Path("record-" + name + ".jsonl") }

// WireLogPath is the wire log of demo server name in e.
func (e *Env) WireLogPath(name string) string { return e.Path("wire-" + name + ".log") }

// WriteConfig writes a config with the given demo servers (each recording
// to RecordPath and logging its wire to WireLogPath) and mcpx settings,
// and returns its path.
func (e *Env) WriteConfig(settings map[string]any, demos ...Demo) string {
	e.T.Helper()
	servers := map[string]any{}
	for _, d := range demos {
		args := append([]string{"demo", "-record", e.RecordPath(d.Name), "-wire-log", e.WireLogPath(d.Name)}, d.Args...)
		srv := map[string]any{"command": e.Bin, "args": args, "env": map[string]string{"GORACE": RaceQuickExit}}
		for k, v := range d.Fields {
			srv[k] = v
		}
		servers[d.Name] = srv
	}
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["mcpx"] = settings
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		e.T.Fatal(err)
	}
	path := e.Path("config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// LoadConfig loads a config file as mcpx would.
func (e *Env) LoadConfig(path string) *config.Config {
	e.T.Helper()
	cfg, err := config.Load(path, &config.LoadOptions{Lookup: e.Lookup})
	if err != nil {
		e.T.Fatal(err)
	}
	return cfg
}

// Records returns what demo server name recorded so far.
func (e *Env) Records(name string) []demo.Event {
	e.T.Helper()
	f, err := os.Open(e.RecordPath(name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.T.Fatal(err)
	}
	defer f.Close()
	var out []demo.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	// The demo may be writing its last line right now: read only whole
	// lines (the scanner hands over a final unterminated one too).
	sc.Split(wholeLines)
	for sc.Scan() {
		var ev demo.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			e.T.Fatalf("record line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// WaitRecord waits until demo server name has recorded an event for which
// match is true, and returns it.
func (e *Env) WaitRecord(name string, timeout time.Duration, match func(demo.Event) bool) demo.Event {
	e.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, ev := range e.Records(name) {
			if match(ev) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("no matching record from %q within %s; records: %s", name, timeout, e.dumpRecords(name))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *Env) dumpRecords(name string) string {
	b, _ := os.ReadFile(e.RecordPath(name))
	return string(b)
}

// Command returns an mcpx command in this installation.
func (e *Env) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Bin, args...)
	cmd.Env = e.Environ()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs an mcpx command to its end and returns stdout, stderr and the
// exit code.
func (e *Env) Run(timeout time.Duration, args ...string) (string, string, int) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := e.Command(ctx, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.T.Fatalf("running mcpx %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// RuntimeDir is where the installation's daemons keep their sockets and
// locks.
func (e *Env) RuntimeDir() string {
	p, err := config.DefaultPaths(func(k string) string { v, _ := e.Lookup(k); return v })
	if err != nil {
		e.T.Fatal(err)
	}
	return p.RuntimeDir
}

// StopDaemons stops every daemon of the installation (each serves one
// config file and has a socket in RuntimeDir), by its socket: the
// config file a test leaves behind may be one mcpx refuses to load. It
// waits, as mcpx stop does, until the daemon releases its lock, which it
// holds until its last upstream is gone.
func (e *Env) StopDaemons() {
	socks, _ := filepath.Glob(filepath.Join(e.RuntimeDir(), "d-*.sock"))
	for _, s := range socks {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := (&localclient.Client{Socket: s}).Shutdown(ctx)
		cancel()
		if errors.Is(err, localclient.ErrNoDaemon) {
			continue
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "mcpxtest: stopping the daemon of %s: %v\n", s, err)
			continue
		}
		lock := strings.TrimSuffix(s, ".sock") + ".lock"
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if unlock, err := sock.Lock(lock); err == nil {
				unlock()
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "mcpxtest: the daemon of %s did not stop within 15s\n", s)
				break
			}
		}
	}
}

// wholeLines is bufio.ScanLines without the final unterminated line.
func wholeLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}

// dumpDaemonLogs logs every daemon log of the installation, for a failed
// test.
func (e *Env) dumpDaemonLogs() {
	logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			e.T.Logf("daemon log %s:\n%s", l, b)
		}
	}
}
