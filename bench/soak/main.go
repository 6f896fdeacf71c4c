// Command soak runs the mcpx daemon under mixed load for a long time and
// reports what it holds over time: resident memory, open descriptors and
// goroutines (from /proc and `mcpx status`). It is not part of CI:
//
//	go run ./bench/soak                    # 30 minutes, a sample every 30 s
//	go run ./bench/soak -duration 5m -every 15s
//
// The load, all at once: HTTP hosts (legacy sessions and stateless
// 2026-07-28 requests) calling the demo's echo and export with progress,
// some abandoned mid-call (the request's connection dropped) or cancelled
// (notifications/cancelled); stdio hosts (`mcpx serve`) doing the same
// and leaving; an upstream crashing now and then (the demo's crash tool);
// and the config reloaded now and then (`mcpx reload`). Everything runs
// in a private state directory; the daemon is stopped at the end. A
// growth of descriptors or goroutines from the first sample to the last,
// with the load the same, is a leak.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	duration := flag.Duration("duration", 30*time.Minute, "how long to run the load")
	every := flag.Duration("every", 30*time.Second, "how often to sample the daemon")
	hosts := flag.Int("http-hosts", 6, "HTTP hosts calling at once")
	stdio := flag.Int("stdio-hosts", 2, "stdio hosts (mcpx serve) calling at once")
	mcpx := flag.String("mcpx", "", "the mcpx binary (default: built from this module)")
	flag.Parse()
	if err := run(*duration, *every, *hosts, *stdio, *mcpx); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// counters are the load's outcomes.
type counters struct {
	calls, ok, errors, cancelled, abandoned, crashes, reloads, sessions atomic.Int64

	mu    sync.Mutex
	kinds map[string]int // errors by their first 80 bytes
}

// fail counts an error, by kind.
func (c *counters) fail(err error) {
	c.errors.Add(1)
	k := fmt.Sprint(err)
	if len(k) > 80 {
		k = k[:80]
	}
	c.mu.Lock()
	if c.kinds == nil {
		c.kinds = map[string]int{}
	}
	c.kinds[k]++
	c.mu.Unlock()
}

func run(duration, every time.Duration, nHTTP, nStdio int, bin string) error {
	dir, err := os.MkdirTemp("", "mcpx-soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "mcpx")
		build := exec.Command("go", "build", "-o", bin, "./cmd/mcpx")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building mcpx: %w", err)
		}
	}
	env := newEnv(dir, bin)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := env.writeConfig(addr, 0); err != nil {
		return err
	}
	if out, err := env.mcpx(60*time.Second, "tools", "--config", env.cfg); err != nil {
		return fmt.Errorf("starting the daemon: %v\n%s", err, out)
	}
	defer env.mcpx(30*time.Second, "stop", "--config", env.cfg)
	tok, err := os.ReadFile(filepath.Join(dir, "s", "mcpx", "token"))
	if err != nil {
		return err
	}
	tok = bytes.TrimSpace(tok)
	url := "http://" + addr + "/mcp"

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	var c counters
	var wg sync.WaitGroup
	for i := range nHTTP {
		wg.Go(func() { httpHost(ctx, url, string(tok), i%2 == 0, &c) })
	}
	for range nStdio {
		wg.Go(func() { stdioHost(ctx, env, &c) })
	}
	wg.Go(func() { chaos(ctx, env, url, string(tok), &c) })

	fmt.Printf("soak: %s of load on %s (daemon of %s); a sample every %s\n", duration, url, env.cfg, every)
	fmt.Printf("%-9s %9s %5s %10s %8s %7s %7s %9s %9s %7s %7s\n", "elapsed", "rss_kib", "fds", "goroutines", "calls", "ok", "errors", "cancelled", "abandoned", "crashes", "reloads")
	start := time.Now()
	var first, last sample
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 0; ; n++ {
		s, err := env.sample()
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: sampling:", err)
		} else {
			if n == 0 {
				first = s
			}
			last = s
			fmt.Printf("%-9s %9d %5d %10d %8d %7d %7d %9d %9d %7d %7d\n", time.Since(start).Round(time.Second), s.rssKiB, s.fds, s.goroutines,
				c.calls.Load(), c.ok.Load(), c.errors.Load(), c.cancelled.Load(), c.abandoned.Load(), c.crashes.Load(), c.reloads.Load())
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			// The load has stopped: what the daemon holds now, at rest.
			time.Sleep(3 * time.Second)
			if s, err := env.sample(); err == nil {
				fmt.Printf("%-9s %9d %5d %10d   (at rest after the load)\n", time.Since(start).Round(time.Second), s.rssKiB, s.fds, s.goroutines)
				last = s
			}
			fmt.Printf("soak: first sample %d KiB, %d fds, %d goroutines; last %d KiB, %d fds, %d goroutines\n",
				first.rssKiB, first.fds, first.goroutines, last.rssKiB, last.fds, last.goroutines)
			for k, n := range c.kinds {
				fmt.Printf("soak: %d errors: %s\n", n, k)
			}
			return nil
		case <-tick.C:
		}
	}
}

// chaos crashes an upstream, reloads the config and runs a CLI call, in
// turn, every few seconds.
func chaos(ctx context.Context, env *soakEnv, url, tok string, c *counters) {
	h := &httpClient{url: url, token: tok}
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(3+rand.IntN(5)) * time.Second):
		}
		switch i % 3 {
		case 0:
			c.crashes.Add(1)
			_, _ = h.call(ctx, "b__crash", map[string]any{"after": 0.1}, nil)
		case 1:
			if env.writeConfig(env.listen, i) == nil {
				if _, err := env.mcpx(30*time.Second, "reload", "--config", env.cfg); err == nil {
					c.reloads.Add(1)
				}
			}
		case 2:
			c.calls.Add(1)
			if out, err := env.mcpx(30*time.Second, "call", "--quiet", "--config", env.cfg, "a.echo", `{"from":"cli"}`); err != nil {
				c.fail(fmt.Errorf("mcpx call: %v: %s", err, out))
			} else {
				c.ok.Add(1)
			}
		}
	}
}

// soakEnv is the private installation.
type soakEnv struct {
	dir, bin, cfg, listen string
}

func newEnv(dir, bin string) *soakEnv {
	for _, sub := range []string{"c", "s", "r", "h"} {
		_ = os.MkdirAll(filepath.Join(dir, sub), 0o700)
	}
	return &soakEnv{dir: dir, bin: bin, cfg: filepath.Join(dir, "config.json")}
}

func (e *soakEnv) environ() []string {
	return append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(e.dir, "c"), "XDG_STATE_HOME="+filepath.Join(e.dir, "s"),
		"XDG_RUNTIME_DIR="+filepath.Join(e.dir, "r"), "HOME="+filepath.Join(e.dir, "h"))
}

// writeConfig writes two demo servers, a and b, and the HTTP listener;
// gen changes a setting, so that a reload has something to apply.
func (e *soakEnv) writeConfig(listen string, gen int) error {
	e.listen = listen
	demo := func() map[string]any { return map[string]any{"command": e.bin, "args": []string{"demo"}} }
	doc := map[string]any{
		"mcpServers": map[string]any{"a": demo(), "b": demo()},
		"mcpx":       map[string]any{"http": map[string]any{"listen": listen}, "queueLength": 64 + gen%2},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	tmp := e.cfg + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, e.cfg)
}

// mcpx runs an mcpx command to its end.
func (e *soakEnv) mcpx(timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.environ()
	return cmd.CombinedOutput()
}
