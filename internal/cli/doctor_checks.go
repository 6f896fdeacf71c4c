package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/hostconfig"
	"mcpx/internal/hosttoken"
	"mcpx/internal/localclient"
	"mcpx/internal/mcp"
)

// servers starts each enabled server in an mcpx of its own and lists its
// tools, four at a time.
func (d *doctor) servers(ctx context.Context, cfg *config.Config) {
	names := cfg.Names()
	results := make([]check, len(names))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, name := range names {
		s := cfg.Servers[name]
		if s.Disabled {
			results[i] = check{Kind: "server", Name: name, Level: levelInfo, Detail: "disabled"}
			continue
		}
		if d.env.LookInProcess == nil {
			results[i] = check{Kind: "server", Name: name, Level: levelInfo, Detail: "not started: this mcpx cannot run servers"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = d.probe(ctx, cfg, s)
		}()
	}
	wg.Wait()
	for name, e := range cfg.Unconfigured {
		results = append(results, check{Kind: "server", Name: name, Level: levelFail, Detail: "not configured: " + e.Reason()})
	}
	slices.SortStableFunc(results, func(a, b check) int { return strings.Compare(a.Name, b.Name) })
	d.checks = append(d.checks, results...)
}

// probe serves one host, itself, with only server s, and lists the tools.
func (d *doctor) probe(ctx context.Context, cfg *config.Config, s *config.Server) check {
	c := check{Kind: "server", Name: s.Name}
	one := *cfg
	one.Servers = map[string]*config.Server{s.Name: s}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	host, conn := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- d.env.LookInProcess(ctx, &one, conn, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	defer func() {
		host.Close()
		<-done // LookInProcess returns once the host (this probe) leaves
	}()
	if dl, ok := ctx.Deadline(); ok {
		host.SetDeadline(dl)
	}
	start := time.Now()
	rpc := &lineRPC{w: host, r: bufio.NewReader(host)}
	tools, why, err := rpc.listTools()
	took := time.Since(start)
	switch {
	case err != nil:
		c.Level, c.Detail = levelFail, fmt.Sprintf("no answer within %s: %v", d.timeout, err)
	case why != "":
		c.Level, c.Detail = levelFail, "did not start or list its tools: "+why
	default:
		c.Level, c.Detail = levelOK, "started and listed its tools"
		c.Tools = &tools
	}
	c.TookMs = float64(took.Microseconds()) / 1000
	return c
}

// metaTools are mcpx's own tools, which every listing has.
var metaTools = map[string]bool{"mcpx_search": true, "mcpx_call": true, "mcpx_exec": true, "mcpx_describe": true, "mcpx_job": true, "mcpx_job_cancel": true}

// lineRPC speaks newline-delimited JSON-RPC as a host on stdio does.
type lineRPC struct {
	w      io.Writer
	r      *bufio.Reader
	nextID int
}

func (l *lineRPC) call(method string, params any) (json.RawMessage, error) {
	l.nextID++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": l.nextID, "method": method, "params": params})
	if _, err := l.w.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := l.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != l.nextID {
			continue // a notification, or a request mcpx asks of its host
		}
		if m.Error != nil {
			return nil, errors.New(m.Error.Message)
		}
		return m.Result, nil
	}
}

// listTools initializes and lists the tools; why is set when the server
// could not be listed (mcpx_search names unavailable servers).
func (l *lineRPC) listTools() (n int, why string, err error) {
	if _, err := l.call(mcp.MethodInitialize, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpx-doctor", "version": "1"}}); err != nil {
		return 0, "", err
	}
	if _, err := l.w.Write([]byte(mcp.InitializedNotification + "\n")); err != nil {
		return 0, "", err
	}
	res, err := l.call(mcp.MethodToolsList, map[string]any{})
	if err != nil {
		return 0, "", err
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return 0, "", err
	}
	for _, t := range list.Tools {
		if !metaTools[t.Name] {
			n++
		}
	}
	if n > 0 {
		return n, "", nil
	}
	res, err = l.call(mcp.MethodToolsCall, map[string]any{"name": "mcpx_search", "arguments": map[string]any{"query": "", "limit": 1}})
	if err != nil {
		return 0, "", err
	}
	var out struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(res, &out)
	for _, c := range out.Content {
		if i := strings.Index(c.Text, "is unavailable: "); i >= 0 {
			return 0, strings.TrimSuffix(c.Text[i+len("is unavailable: "):], ")"), nil
		}
	}
	return 0, "", nil
}

// hosts says, for each known host, whether its config is there and
// whether it points at mcpx.
func (d *doctor) hosts(cfg *config.Config) {
	for _, h := range hostconfig.Hosts {
		file, err := h.File(hostEnv(d.env), exists)
		if err != nil {
			d.add("host", h.Name, levelInfo, "%v", err)
			continue
		}
		data, existed, err := readMaybe(file)
		switch {
		case err != nil:
			d.add("host", h.Name, levelWarn, "%s: %v", file, err)
			continue
		case !existed:
			d.add("host", h.Name, levelInfo, "no config at %s", file)
			continue
		}
		servers, err := h.Servers(data)
		if err != nil {
			d.add("host", h.Name, levelWarn, "%s does not read as %s reads it: %v", file, h.Title, err)
			continue
		}
		var found []string
		level := levelOK
		for _, name := range sortedNames(servers) {
			cmd, url := entryTarget(servers[name])
			switch {
			case cmd != "" && filepath.Base(cmd) == "mcpx":
				if _, err := os.Stat(cmd); err != nil {
					level = levelFail
					found = append(found, fmt.Sprintf("%q runs %s, which is not there (mcpx install %s again)", name, cmd, h.Name))
				} else if cmd != d.env.Executable {
					found = append(found, fmt.Sprintf("%q runs %s, another mcpx than this one (%s)", name, cmd, d.env.Executable))
				} else {
					found = append(found, fmt.Sprintf("%q runs this mcpx on stdio", name))
				}
			case url != "" && cfg != nil && cfg.HTTP.Listen != "" && strings.Contains(url, "//"+cfg.HTTP.Listen+"/"):
				found = append(found, fmt.Sprintf("%q reaches mcpx's HTTP face at %s", name, url))
				if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 && bytes.Contains(servers[name], []byte("Bearer ")) {
					if level != levelFail {
						level = levelWarn
					}
					found = append(found, fmt.Sprintf("the file holds its token and is open to others (mode %v): chmod 600 %s", fi.Mode().Perm(), file))
				}
			}
		}
		if len(found) == 0 {
			d.add("host", h.Name, levelInfo, "%s has %d servers, none of them mcpx (mcpx install %s)", file, len(servers), h.Name)
			continue
		}
		d.add("host", h.Name, level, "%s: %s", file, strings.Join(found, "; "))
	}
}

func sortedNames(m map[string]json.RawMessage) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// entryTarget returns what a host's server entry runs or reaches.
func entryTarget(raw json.RawMessage) (cmd, url string) {
	var e map[string]any
	if json.Unmarshal(raw, &e) != nil {
		return "", ""
	}
	switch c := e["command"].(type) {
	case string:
		cmd = c
	case []any:
		if len(c) > 0 {
			cmd, _ = c[0].(string)
		}
	}
	for _, k := range []string{"url", "httpUrl", "serverUrl"} {
		if u, ok := e[k].(string); ok {
			url = u
		}
	}
	return cmd, url
}

// files checks that what decides what mcpx runs, and what opens it, is
// not open to other users.
func (d *doctor) files(cfg *config.Config, paths config.Paths) {
	perm := func(path string, bad os.FileMode, level, why string) {
		fi, err := os.Stat(path)
		if err != nil {
			return
		}
		if m := fi.Mode().Perm(); m&bad != 0 {
			d.add("files", path, level, "mode %v: %s (chmod %o)", m, why, m&^bad)
			return
		}
		d.add("files", path, levelOK, "mode %v", fi.Mode().Perm())
	}
	if cfg != nil && cfg.File != "" {
		perm(cfg.File, 0o022, levelFail, "others may change what mcpx runs")
	}
	perm(paths.TokenFile(), 0o077, levelFail, "others may read the token that opens mcpx's HTTP face")
	perm(paths.TokenDir(), 0o077, levelFail, "others may read or plant host tokens")
	if infos, err := hosttoken.ListTokens(paths.TokenDir()); err == nil {
		for _, t := range infos {
			if t.Err != nil {
				d.add("files", filepath.Join(paths.TokenDir(), t.Name), levelFail, "refused: %v", t.Err)
			}
		}
	}
	if fi, err := os.Stat(paths.StateDir); err == nil && fi.Mode().Perm()&0o022 == 0 {
		perm(paths.StateDir, 0o077, levelWarn, "others may read mcpx's logs and job results")
	} else {
		perm(paths.StateDir, 0o022, levelFail, "others may change mcpx's jobs, tokens and logs")
	}
}

// configName names a daemon's config: its file, or the built-in one.
func configName(file string) string {
	if file == "" {
		return "the built-in config (no config file)"
	}
	return fmt.Sprintf("config %s", file)
}

// stopHint says how to stop a daemon of another config or build.
func stopHint(st *apitype.Status) string {
	cmd := "mcpx stop"
	if st.Config != "" {
		cmd += " --config " + st.Config
	}
	return fmt.Sprintf("stop it with %s (from the binary that started it) or kill %d", cmd, st.PID)
}

// daemons looks for daemons of this user: this build's for this config,
// and any other that still answers.
func (d *doctor) daemons(ctx context.Context, cfg *config.Config, paths config.Paths) {
	ours := paths.Daemon(cfg.File, d.env.Build).Socket
	socks, _ := filepath.Glob(filepath.Join(paths.RuntimeDir, "d-*.sock"))
	if dir := filepath.Dir(ours); dir != paths.RuntimeDir {
		more, _ := filepath.Glob(filepath.Join(dir, "d-*.sock"))
		socks = append(socks, more...)
	}
	if !slices.Contains(socks, ours) {
		socks = append(socks, ours)
	}
	for _, sock := range socks {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := (&localclient.Client{Socket: sock, Version: d.env.Version}).Status(ctx)
		cancel()
		switch {
		case sock == ours && err != nil:
			d.add("daemon", sock, levelInfo, "no daemon of this build runs (a host or mcpx call starts one)")
		case sock == ours:
			d.add("daemon", sock, levelOK, "this build's daemon runs: pid %d, version %s", st.PID, st.Version)
		case err != nil:
			// A socket nothing answers on: a daemon that died; harmless.
		case st.Config == cfg.File:
			d.add("daemon", sock, levelWarn, "a daemon of another build (version %s, pid %d) still serves this config: hosts started by that build still use it; stop it with mcpx stop from that binary, or kill %d", st.Version, st.PID, st.PID)
		default:
			d.add("daemon", sock, levelInfo, "a daemon for %s runs: pid %d, version %s; %s", configName(st.Config), st.PID, st.Version, stopHint(st))
		}
	}
}
