package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// sample is what the daemon holds at one moment.
type sample struct {
	rssKiB, fds, goroutines int
}

// sample reads the daemon's status, then its /proc.
func (e *soakEnv) sample() (sample, error) {
	out, err := e.mcpx(30*time.Second, "status", "--config", e.cfg, "--json")
	if err != nil {
		return sample{}, fmt.Errorf("mcpx status: %v: %s", err, out)
	}
	var st struct {
		PID        int `json:"pid"`
		Goroutines int `json:"goroutines"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return sample{}, err
	}
	s := sample{goroutines: st.Goroutines}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(st.PID) + "/fd")
	if err != nil {
		return sample{}, err
	}
	s.fds = len(fds)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/status")
	if err != nil {
		return sample{}, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			s.rssKiB, _ = strconv.Atoi(strings.Fields(v)[0])
		}
	}
	return s, nil
}

// httpClient is a raw MCP host over HTTP.
type httpClient struct {
	url, token, session string
	hc                  http.Client
}

// call sends a tools/call and reads its whole answer; ctx ending drops
// the request's connection mid-call (an abandoned call).
func (h *httpClient) call(ctx context.Context, tool string, args, meta map[string]any) ([]byte, error) {
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	return h.post(ctx, map[string]any{"jsonrpc": "2.0", "id": rand.Int64(), "method": "tools/call", "params": params}, tool)
}

func (h *httpClient) post(ctx context.Context, msg map[string]any, tool string) ([]byte, error) {
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+h.token)
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	} else if m, _ := msg["method"].(string); m != "initialize" {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", m)
		if tool != "" {
			req.Header.Set("Mcp-Name", tool)
		}
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && msg["method"] == "initialize" {
		h.session = resp.Header.Get("Mcp-Session-Id")
	}
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
	}
	return out, err
}

// modernMeta is a stateless 2026-07-28 request's _meta.
func modernMeta(extra map[string]any) map[string]any {
	m := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "soak", "version": "1"}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// httpHost calls until ctx ends: a legacy session (renewed now and then)
// or stateless requests; echo, and export with progress, of which some
// are abandoned mid-call.
func httpHost(ctx context.Context, url, tok string, legacy bool, c *counters) {
	h := &httpClient{url: url, token: tok}
	defer h.hc.CloseIdleConnections()
	for i := 0; ctx.Err() == nil; i++ {
		if legacy && (h.session == "" || i%50 == 0) {
			h.session = ""
			init := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "soak", "version": "1"}}}
			if _, err := h.post(ctx, init, ""); err != nil {
				continue
			}
			c.sessions.Add(1)
		}
		var meta map[string]any
		if !legacy {
			meta = modernMeta(nil)
		}
		tool, args := "a__echo", map[string]any{"i": i, "pad": strings.Repeat("x", rand.IntN(4096))}
		if rand.IntN(3) == 0 {
			tool, args = "b__export", map[string]any{"seconds": 0.5, "steps": 5}
			if meta == nil {
				meta = map[string]any{}
			}
			meta["progressToken"] = i
		}
		cctx, cancel := context.WithCancel(ctx)
		abandon := rand.IntN(10) == 0
		if abandon {
			time.AfterFunc(time.Duration(rand.IntN(300))*time.Millisecond, cancel)
		}
		c.calls.Add(1)
		_, err := h.call(cctx, tool, args, meta)
		cancel()
		switch {
		case err == nil:
			c.ok.Add(1)
		case abandon || ctx.Err() != nil:
			c.abandoned.Add(1)
		default:
			c.fail(err)
		}
	}
}

// stdioHost runs `mcpx serve` hosts one after another until ctx ends:
// each makes some calls, cancels some with notifications/cancelled, and
// leaves (its stdin closed) with a call in flight now and then.
func stdioHost(ctx context.Context, env *soakEnv, c *counters) {
	for ctx.Err() == nil {
		stdioSession(ctx, env, c)
	}
}

func stdioSession(ctx context.Context, env *soakEnv, c *counters) {
	cmd := exec.Command(env.bin, "serve", "--config", env.cfg)
	cmd.Env = env.environ()
	cmd.WaitDelay = 5 * time.Second
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		c.fail(err)
		time.Sleep(time.Second)
		return
	}
	lines := make(chan string, 64)
	defer func() {
		stdin.Close() // serve ends, its stdout with it, and the reader
		for range lines {
		}
		_ = cmd.Wait()
	}()
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	send := func(s string) { _, _ = io.WriteString(stdin, s+"\n") }
	await := func(id string) bool {
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return false
				}
				if strings.Contains(l, `"id":`+id+`,`) || strings.Contains(l, `"id":`+id+`}`) {
					return !strings.Contains(l, `"error"`)
				}
			case <-timeout:
				return false
			case <-ctx.Done():
				return false
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak-stdio","version":"1"}}}`)
	if !await("0") {
		c.fail(fmt.Errorf("stdio initialize failed"))
		return
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= 20 && ctx.Err() == nil; i++ {
		id := strconv.Itoa(i)
		c.calls.Add(1)
		switch rand.IntN(4) {
		case 0: // cancelled mid-call
			send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"b__export","arguments":{"seconds":2,"steps":10},"_meta":{"progressToken":` + id + `}}}`)
			time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"soak"}}`)
			c.cancelled.Add(1)
			await(id)
		case 1: // left with a call in flight
			if rand.IntN(4) == 0 {
				send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"b__export","arguments":{"seconds":5,"steps":5}}}`)
				c.abandoned.Add(1)
				return
			}
			fallthrough
		default:
			send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"a__echo","arguments":{"i":` + id + `}}}`)
			if await(id) {
				c.ok.Add(1)
			} else {
				c.fail(fmt.Errorf("stdio call failed"))
			}
		}
	}
}
