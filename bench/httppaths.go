package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fixtureHTTP is the demo serving Streamable HTTP, shared by the direct
// HTTP paths and the paths with an HTTP upstream.
type fixtureHTTP struct {
	url    string
	record string
}

func (b *bench) sharedFixtureHTTP() (*fixtureHTTP, error) {
	if b.fixture != nil {
		return b.fixture, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	f := &fixtureHTTP{url: "http://" + addr + "/mcp", record: b.recordFile("http")}
	// The demo serves HTTP until its stdin ends: keep a pipe open.
	s, err := spawn(b.logs, "demo-http", b.demoArgs(f.record, "-http", addr), spawnOpts{env: b.env, stdinPipe: true})
	if err != nil {
		return nil, err
	}
	b.keep = append(b.keep, s.stdin)
	if err := waitPort(addr, 30*time.Second, s.proc); err != nil {
		return nil, fmt.Errorf("mcpx demo -http: %w", err)
	}
	b.fixture = f
	return f, nil
}

func setupDirectHTTP(modern bool) func(b *bench, p *path) error {
	return func(b *bench, p *path) error {
		f, err := b.sharedFixtureHTTP()
		if err != nil {
			return err
		}
		p.record = f.record
		p.h, err = newHTTPHost(f.url, "", modern)
		return err
	}
}

// serveHTTP is `mcpx serve --http`, shared by its two eras.
func (b *bench) sharedServeHTTP() (*proc, string, string, error) {
	if b.serveHTTP != nil {
		return b.serveHTTP, b.serveHTTPURL, b.serveHTTPRecord, nil
	}
	record := b.recordFile("serve-http")
	cfg, err := b.writeConfig("serve-http", b.stdioServer(record), nil)
	if err != nil {
		return nil, "", "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s, err := spawn(b.logs, "mcpx-serve-http", []string{b.mcpx, "serve", "--config", cfg, "--http", addr, "--token", "none"}, spawnOpts{env: b.env, stdinPipe: true})
	if err != nil {
		return nil, "", "", err
	}
	b.keep = append(b.keep, s.stdin)
	if err := waitPort(addr, 30*time.Second, s.proc); err != nil {
		return nil, "", "", fmt.Errorf("mcpx serve --http: %w", err)
	}
	b.serveHTTP, b.serveHTTPURL, b.serveHTTPRecord = s.proc, "http://"+addr+"/mcp", record
	return b.serveHTTP, b.serveHTTPURL, record, nil
}

func setupServeHTTP(modern bool) func(b *bench, p *path) error {
	return func(b *bench, p *path) error {
		pr, url, record, err := b.sharedServeHTTP()
		if err != nil {
			return err
		}
		p.record, p.tools, p.gateway = record, "demo__", []*proc{pr}
		p.h, err = newHTTPHost(url, "", modern)
		return err
	}
}

func setupDaemonHTTP(modern bool) func(b *bench, p *path) error {
	return func(b *bench, p *path) error {
		d, err := b.sharedDaemon()
		if err != nil {
			return err
		}
		p.record, p.tools, p.gateway = d.record, "demo__", []*proc{d.proc}
		p.h, err = newHTTPHost(d.url, d.token, modern)
		return err
	}
}

// sharedMCPProxy is mcp-proxy as its README starts it
// (`mcp-proxy --port 8080 -- <command>`), serving both eras on /mcp.
func (b *bench) sharedMCPProxy() (*proc, string, string, error) {
	if b.mcpProxy != nil {
		return b.mcpProxy, b.mcpProxyURL, b.mcpProxyRecord, nil
	}
	record := b.recordFile("mcp-proxy")
	port, err := freePort()
	if err != nil {
		return nil, "", "", err
	}
	argv := append([]string{b.node, filepath.Join(b.nodeModules, "mcp-proxy", "dist", "bin", "mcp-proxy.mjs"),
		"--port", strconv.Itoa(port), "--"}, b.demoArgs(record)...)
	s, err := spawn(b.logs, "mcp-proxy", argv, spawnOpts{env: b.nodeEnv()})
	if err != nil {
		return nil, "", "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitPort(addr, 60*time.Second, s.proc); err != nil {
		return nil, "", "", fmt.Errorf("mcp-proxy: %w", err)
	}
	b.mcpProxy, b.mcpProxyURL, b.mcpProxyRecord = s.proc, "http://"+addr+"/mcp", record
	return s.proc, b.mcpProxyURL, record, nil
}

func setupMCPProxy(modern bool) func(b *bench, p *path) error {
	return func(b *bench, p *path) error {
		pr, url, record, err := b.sharedMCPProxy()
		if err != nil {
			return err
		}
		p.record, p.gateway = record, []*proc{pr}
		p.h, err = newHTTPHost(url, "", modern)
		return err
	}
}

// setupSupergateway runs supergateway as its README's "stateful mode"
// (stdio -> Streamable HTTP; one child per session). Its stateless mode
// and its 2026-07-28 leg start a child per request, so they are not
// benchmarked.
func setupSupergateway(b *bench, p *path) error {
	p.record = b.recordFile("supergateway")
	port, err := freePort()
	if err != nil {
		return err
	}
	argv := []string{b.node, filepath.Join(b.nodeModules, "supergateway", "dist", "index.js"),
		"--stdio", strings.Join(b.demoArgs(p.record), " "),
		"--outputTransport", "streamableHttp", "--stateful", "--port", strconv.Itoa(port)}
	s, err := spawn(b.logs, p.id, argv, spawnOpts{env: b.nodeEnv()})
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitPort(addr, 60*time.Second, s.proc); err != nil {
		return fmt.Errorf("supergateway: %w", err)
	}
	p.gateway = []*proc{s.proc}
	p.note = "supergateway logs every message at its default log level (info), as its README runs it."
	p.h, err = newHTTPHost("http://"+addr+"/mcp", "", false)
	return err
}

func setupInProcessUpHTTP(b *bench, p *path) error {
	f, err := b.sharedFixtureHTTP()
	if err != nil {
		return err
	}
	p.record, p.tools = f.record, "demo__"
	cfg, err := b.writeConfig("inproc-uphttp", map[string]any{"url": f.url}, nil)
	if err != nil {
		return err
	}
	s, err := b.stdioPath(p, p.id, []string{b.mcpx, "serve", "--in-process", "--config", cfg})
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc}
	p.note = "mcpx finds the fixture speaks 2026-07-28 and uses it upstream, so its ratios are to the direct 2026-07-28 path."
	return nil
}

// setupSupergatewayStdio runs supergateway as its README's "Streamable
// HTTP -> stdio" mode, a stdio face for an HTTP server.
func setupSupergatewayStdio(b *bench, p *path) error {
	f, err := b.sharedFixtureHTTP()
	if err != nil {
		return err
	}
	p.record = f.record
	argv := []string{b.node, filepath.Join(b.nodeModules, "supergateway", "dist", "index.js"), "--streamableHttp", f.url}
	s, err := b.stdioPath(p, p.id, argv)
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc}
	return nil
}

// freePort returns a TCP port that was free a moment ago on 127.0.0.1.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitPort waits until addr accepts connections, or p exits.
func waitPort(addr string, timeout time.Duration, p *proc) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if p.exited() {
			return fmt.Errorf("exited before listening on %s", addr)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %s", addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
