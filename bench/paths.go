package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A path is one way from the bench's host to the demo fixture: direct, or
// through a gateway. Every path's host connection stays open for the whole
// run; rounds visit the paths in turn.
type path struct {
	id    string // for -paths
	label string // in the table
	group string // groupStdio, groupHTTP or groupStdioHTTP
	base  string // id of the direct path its ratios are to
	tools string // prefix of the demo's tool names on this path
	// record is the demo's record file behind this path.
	record string
	// gateway are the processes whose CPU and memory the path costs
	// (none for a direct path).
	gateway []*proc
	h       host
	tail    *recordTail
	note    string // said under the table
	// jobs marks a path whose mcpx keeps jobs and knows the bench host's
	// timer: the job figure runs on it.
	jobs bool
	// everything marks a path whose upstream is server-everything (npm)
	// rather than the demo fixture: its echo takes a message, and it
	// keeps no record (no burst or cancel figures). upArgv is its command
	// line after the node binary, as /proc shows it.
	everything bool
	upArgv     []string
}

// Groups of paths: what the host speaks, and what the upstream speaks.
const (
	groupStdio      = "host stdio, upstream stdio"
	groupStdio26    = "host stdio 2026-07-28, upstream stdio (mcpx speaks 2026-07-28 to both)"
	groupHTTP       = "host HTTP, upstream stdio (direct: the fixture over HTTP)"
	groupStdioHTTP  = "host stdio, upstream HTTP"
	groupEverything = "host stdio, upstream server-everything (npm, stdio; the setting of the floor goal)"
)

// pathSpec says how to set a path up.
type pathSpec struct {
	id, label, group, base string
	npm                    bool // needs the npm gateways
	setup                  func(b *bench, p *path) error
}

// specs lists every path, in table order.
var specs = []pathSpec{
	{"direct", "direct (fixture on stdio)", groupStdio, "direct", false, setupDirect},
	{"relay", "bare relay (the floor)", groupStdio, "direct", false, setupRelay},
	{"inproc", "mcpx serve --in-process", groupStdio, "direct", false, setupInProcess},
	{"inproc-legacy", "mcpx serve --in-process, upstream pinned 2025-11-25", groupStdio, "direct", false, setupInProcessLegacy},
	{"inproc-b", "mcpx serve --in-process, B (-mcpx-b, -env-b)", groupStdio, "direct", false, setupInProcessB},
	{"inproc-job", "mcpx serve --in-process, host with a 1s hard timer", groupStdio, "direct", false, setupInProcessJob},
	{"daemon", "mcpx serve (daemon)", groupStdio, "direct", false, setupDaemonStdio},
	{"daemon-fwd", "mcpx serve (daemon), forwarding (MCPX_HANDOFF=off)", groupStdio, "direct", false, setupDaemonStdioForward},

	{"direct26", "direct (fixture on stdio), 2026-07-28", groupStdio26, "direct26", false, setupDirect},
	{"relay26", "bare relay, 2026-07-28", groupStdio26, "direct26", false, setupRelay},
	{"inproc26", "mcpx serve --in-process, 2026-07-28", groupStdio26, "direct26", false, setupInProcess},
	{"inproc26-b", "mcpx serve --in-process, 2026-07-28, B (-mcpx-b, -env-b)", groupStdio26, "direct26", false, setupInProcessB},
	{"daemon26", "mcpx serve (daemon), 2026-07-28", groupStdio26, "direct26", false, setupDaemonStdio},

	{"http", "direct (fixture on HTTP), legacy", groupHTTP, "http", false, setupDirectHTTP(false)},
	{"http26", "direct (fixture on HTTP), 2026-07-28", groupHTTP, "http26", false, setupDirectHTTP(true)},
	{"serve-http", "mcpx serve --http, legacy", groupHTTP, "http", false, setupServeHTTP(false)},
	{"serve-http26", "mcpx serve --http, 2026-07-28", groupHTTP, "http26", false, setupServeHTTP(true)},
	{"daemon-http", "mcpx daemon HTTP, legacy", groupHTTP, "http", false, setupDaemonHTTP(false)},
	{"daemon-http26", "mcpx daemon HTTP, 2026-07-28", groupHTTP, "http26", false, setupDaemonHTTP(true)},
	{"mcp-proxy", "mcp-proxy, legacy", groupHTTP, "http", true, setupMCPProxy(false)},
	{"mcp-proxy26", "mcp-proxy, 2026-07-28", groupHTTP, "http26", true, setupMCPProxy(true)},
	{"supergateway", "supergateway --stateful, legacy", groupHTTP, "http", true, setupSupergateway},

	{"inproc-uphttp", "mcpx --in-process, HTTP upstream", groupStdioHTTP, "http26", false, setupInProcessUpHTTP},
	{"supergateway-stdio", "supergateway --streamableHttp", groupStdioHTTP, "http", true, setupSupergatewayStdio},

	{"direct-se", "direct (server-everything on stdio)", groupEverything, "direct-se", true, setupEverything},
	{"relay-se", "bare relay, server-everything", groupEverything, "direct-se", true, setupEverything},
	{"inproc-se", "mcpx serve --in-process, server-everything", groupEverything, "direct-se", true, setupEverything},
	{"inproc-se-b", "mcpx serve --in-process, server-everything, B (-mcpx-b, -env-b)", groupEverything, "direct-se", true, setupEverything},
}

// echoArgs returns the arguments of an echo call that make it distinct
// (n), and what its result must hold.
func (p *path) echoArgs(n int64) (args, want []byte) {
	s := strconv.FormatInt(n, 10)
	if p.everything {
		return []byte(`{"message":"n-` + s + `"}`), []byte(`Echo: n-` + s + `"`)
	}
	args = []byte(`{"n":` + s + `}`)
	return args, args
}

// tool returns the name of the demo's tool on p.
func (p *path) tool(name string) string { return p.tools + name }

// demoArgs are the fixture's arguments: every request and cancellation it
// sees goes to record.
func (b *bench) demoArgs(record string, extra ...string) []string {
	return append([]string{b.mcpx, "demo", "-record", record}, extra...)
}

func (b *bench) recordFile(name string) string { return filepath.Join(b.work, "record-"+name+".jsonl") }

// stdioPath starts argv and opens a stdio host on it.
func (b *bench) stdioPath(p *path, name string, argv []string) (*spawned, error) {
	return b.stdioPathEnv(p, name, argv, nil)
}

// stdioPathEnv is stdioPath with extra environment for argv.
func (b *bench) stdioPathEnv(p *path, name string, argv, extraEnv []string) (*spawned, error) {
	s, err := spawn(b.logs, name, argv, spawnOpts{env: append(slices.Clip(b.env), extraEnv...), stdinPipe: true, stdoutPipe: true})
	if err != nil {
		return nil, err
	}
	h, err := newStdioHost(s.stdout, s.stdin, p.group == groupStdio26)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (log: %s)", name, err, filepath.Join(b.logs, logName(name)))
	}
	p.h = h
	return s, nil
}

func setupDirect(b *bench, p *path) error {
	p.record = b.recordFile(p.id)
	_, err := b.stdioPath(p, p.id, b.demoArgs(p.record))
	return err
}

func setupRelay(b *bench, p *path) error {
	p.record = b.recordFile(p.id)
	argv := append([]string{b.self, "relay", "--"}, b.demoArgs(p.record)...)
	s, err := b.stdioPath(p, p.id, argv)
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc}
	return nil
}

// writeConfig writes an mcpx config file with one server, demo.
func (b *bench) writeConfig(name string, server map[string]any, settings map[string]any) (string, error) {
	doc := map[string]any{"mcpServers": map[string]any{"demo": server}}
	if settings != nil {
		doc["mcpx"] = settings
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	f := filepath.Join(b.work, "config-"+name+".json")
	return f, os.WriteFile(f, data, 0o600)
}

func (b *bench) stdioServer(record string) map[string]any {
	args := b.demoArgs(record)
	return map[string]any{"command": args[0], "args": args[1:]}
}

func setupInProcess(b *bench, p *path) error {
	return b.inProcess(p, "")
}

// setupInProcessLegacy pins the upstream to the revision the host speaks,
// as the bare relay passes it: mcpx then translates nothing between eras.
func setupInProcessLegacy(b *bench, p *path) error {
	p.note = "the upstream is pinned (\"protocolVersion\": \"2025-11-25\"), so mcpx speaks the host's revision upstream; by default it speaks the newest, 2026-07-28, and adapts every result."
	return b.inProcess(p, legacyVersion)
}

// setupInProcessB is inproc with another binary or environment (-mcpx-b,
// -env-b): an A/B comparison within each round, so that the noise of a
// shared machine hits both alike. The fixture is the same as inproc's.
func setupInProcessB(b *bench, p *path) error {
	bin, err := b.binB()
	if err != nil {
		return err
	}
	p.note = fmt.Sprintf("path B: %s with %q in its environment.", bin, b.cfg.envB)
	return b.inProcessWith(p, "", bin, b.cfg.envB)
}

// binB is the mcpx binary of the B paths: -mcpx-b, else the one measured.
func (b *bench) binB() (string, error) {
	if b.cfg.mcpxB == "" {
		return b.mcpx, nil
	}
	return filepath.Abs(b.cfg.mcpxB)
}

// setupInProcessJob is inproc with the bench host's timer in the config:
// a hard timer of jobHostTimer, so that a call past it becomes a job. Its
// echo calls each may become one, and none does.
func setupInProcessJob(b *bench, p *path) error {
	p.jobs = true
	p.note = fmt.Sprintf("the config gives the host (clientInfo.name mcpx-bench) a hard timer of %s: every call may become a job, the echo calls end long before.", jobHostTimer)
	return b.inProcessSettings(p, "", b.mcpx, nil, map[string]any{"hosts": map[string]any{"mcpx-bench": map[string]any{"timeout": jobHostTimer.String(), "resetOnProgress": false}}})
}

func (b *bench) inProcess(p *path, version string) error {
	return b.inProcessWith(p, version, b.mcpx, nil)
}

func (b *bench) inProcessWith(p *path, version, bin string, env []string) error {
	return b.inProcessSettings(p, version, bin, env, nil)
}

// inProcessSettings is inProcessWith with the config's mcpx settings.
func (b *bench) inProcessSettings(p *path, version, bin string, env []string, settings map[string]any) error {
	p.record = b.recordFile(p.id)
	server := b.stdioServer(p.record)
	if version != "" {
		server["protocolVersion"] = version
	}
	cfg, err := b.writeConfig(p.id, server, settings)
	if err != nil {
		return err
	}
	p.tools = "demo__"
	argv := []string{bin, "serve", "--in-process", "--config", cfg}
	if len(env) > 0 {
		argv = append(append([]string{"env"}, env...), argv...)
	}
	s, err := b.stdioPath(p, p.id, argv)
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc}
	return nil
}

// daemonState is the shared mcpx daemon of the daemon paths: one daemon,
// one demo behind it, a stdio face and an HTTP listener.
type daemonState struct {
	proc   *proc
	config string
	record string
	url    string
	token  string
}

func (b *bench) sharedDaemon() (*daemonState, error) {
	if b.daemon != nil {
		return b.daemon, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &daemonState{record: b.recordFile("daemon")}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	d.config, err = b.writeConfig("daemon", b.stdioServer(d.record), map[string]any{"http": map[string]any{"listen": addr}})
	if err != nil {
		return nil, err
	}
	s, err := spawn(b.logs, "mcpx-daemon", []string{b.mcpx, "daemon", "--config", d.config, "--log-level", "warn"}, spawnOpts{env: b.env})
	if err != nil {
		return nil, err
	}
	d.proc = s.proc
	if err := waitPort(addr, 30*time.Second, s.proc); err != nil {
		return nil, fmt.Errorf("mcpx daemon: %w", err)
	}
	d.url = "http://" + addr + "/mcp"
	out, err := b.mcpxOutput("token")
	if err != nil {
		return nil, err
	}
	d.token = strings.TrimSpace(out)
	b.daemon = d
	return d, nil
}

// mcpxOutput runs the mcpx binary with args in the bench's environment.
func (b *bench) mcpxOutput(args ...string) (string, error) {
	cmd := exec.Command(b.mcpx, args...)
	cmd.Env = b.env
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("mcpx %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("mcpx %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func setupDaemonStdio(b *bench, p *path) error {
	return b.daemonStdio(p, nil, "CPU and memory: the mcpx serve process (it hands the host's stdio to the daemon) and the daemon.")
}

// setupDaemonStdioForward is the daemon path as it was before serve
// handed the host's stdio off, and as it is where it cannot: serve
// forwards every message. Beside "daemon", in the same rounds.
func setupDaemonStdioForward(b *bench, p *path) error {
	return b.daemonStdio(p, []string{"MCPX_HANDOFF=off"}, "CPU and memory: the mcpx serve process (it forwards every message) and the daemon.")
}

func (b *bench) daemonStdio(p *path, extraEnv []string, note string) error {
	d, err := b.sharedDaemon()
	if err != nil {
		return err
	}
	p.record, p.tools = d.record, "demo__"
	s, err := b.stdioPathEnv(p, p.id, []string{b.mcpx, "serve", "--config", d.config}, extraEnv)
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc, d.proc}
	p.note = note
	return nil
}

// setupEverything puts server-everything, the upstream the floor goal
// was measured against, behind the path's way: directly, behind the bare
// relay, or behind mcpx serve --in-process (which speaks 2025-11-25 to
// it: server-everything knows no later revision). Only latency,
// throughput and CPU are measured; it has no record to time cancels by.
func setupEverything(b *bench, p *path) error {
	p.everything = true
	// The path's id, an argument server-everything ignores, tells its
	// process from the other paths' in /proc.
	p.upArgv = []string{filepath.Join(b.nodeModules, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio", "mcpx-bench-" + p.id}
	up := append([]string{b.node}, p.upArgv...)
	switch p.id {
	case "direct-se":
		_, err := b.stdioPathEnv(p, p.id, up, nil)
		return err
	case "relay-se":
		s, err := b.stdioPathEnv(p, p.id, append([]string{b.self, "relay", "--"}, up...), nil)
		if err != nil {
			return err
		}
		p.gateway = []*proc{s.proc}
		return nil
	}
	cfg, err := b.writeConfig(p.id, map[string]any{"command": up[0], "args": up[1:]}, nil)
	if err != nil {
		return err
	}
	p.tools = "demo__"
	argv := []string{b.mcpx, "serve", "--in-process", "--config", cfg}
	if p.id == "inproc-se-b" {
		if argv[0], err = b.binB(); err != nil {
			return err
		}
		p.note = fmt.Sprintf("path B: %s with %q in its environment.", argv[0], b.cfg.envB)
		if len(b.cfg.envB) > 0 {
			argv = append(append([]string{"env"}, b.cfg.envB...), argv...)
		}
	}
	s, err := b.stdioPath(p, p.id, argv)
	if err != nil {
		return err
	}
	p.gateway = []*proc{s.proc}
	return nil
}
