package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/hostconfig"
	"mcpx/internal/hosttoken"
)

func cmdInstall() *command {
	var (
		configPath, file, url, name  string
		useHTTP, move, dryRun, force bool
		plugin                       bool
	)
	return &command{
		name:  "install",
		usage: "[flags] HOST",
		short: "point a host's config at mcpx",
		long: `
Install edits a host's MCP config so that the host uses mcpx: HOST is one
of ` + hostconfig.Names() + `. It adds a server
"mcpx" that runs this executable, by its absolute path, as "mcpx serve" on
stdio (with the XDG directories of this shell, which some hosts do not pass
on). With --http the entry names mcpx's HTTP face instead (mcpx.http.listen
in the config, or --url) with a bearer token of the host's own, minted as
"mcpx token --name" does (named after the host unless --name says
otherwise); a daemon must then be running for the host to reach it. For
Codex, which leaves out of a turn a server that has not listed its tools
within about a second, the entry is marked required, with a
startup_timeout_sec long enough for mcpx to start its daemon and its
slowest server.

--move also takes the host's own servers into mcpx's config (as mcpx
import does) and removes from the host's file those taken; servers mcpx
skips stay with the host.

Only the members it adds or removes change: every other byte of the file
stays, comments included, and the result is read back before it is
written. A unified diff is printed every time. The file as it was is kept
in mcpx's state dir, and "mcpx uninstall HOST" puts it back byte for byte.
Installing again rewrites the entry and keeps the first backup.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.StringVar(&file, "file", "", "edit `FILE` instead of the host's user-wide config")
			fs.BoolVar(&useHTTP, "http", false, "point the host at mcpx's HTTP face instead of stdio")
			fs.StringVar(&url, "url", "", "the HTTP face's `URL` (implies --http; default http://<mcpx.http.listen>/mcp)")
			fs.StringVar(&name, "name", "", "the `NAME` of the host's token (default: the host's name)")
			fs.BoolVar(&move, "move", false, "also move the host's servers into mcpx's config")
			fs.BoolVar(&dryRun, "dry-run", false, "print the diff, change nothing")
			fs.BoolVar(&force, "force", false, "with --move, replace mcpx's servers of the same names")
			fs.BoolVar(&plugin, "plugin", false, "opencode: install mcpx's opencode plugin (live progress, cancel) instead of an MCP entry")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			h, err := oneHost(args)
			if err != nil {
				return err
			}
			useHTTP = useHTTP || url != ""
			if plugin {
				return installPlugin(env, h, file, useHTTP || move || name != "", dryRun)
			}
			if name != "" && !useHTTP {
				return usagef("--name goes with --http")
			}
			if useHTTP && !h.HTTP {
				return usagef("%s's file runs local servers only: install it without --http", h.Title)
			}
			in := &installer{env: env, h: h, configPath: configPath}
			if err := in.locate(file); err != nil {
				return err
			}
			target, err := in.target(useHTTP, url, name, dryRun)
			if err != nil {
				return err
			}
			return in.install(target, move, force, dryRun)
		},
	}
}

// installer edits one host's file.
type installer struct {
	env        *Env
	h          *hostconfig.Host
	configPath string
	paths      config.Paths
	file       string
}

func (in *installer) locate(file string) error {
	var err error
	if in.paths, err = config.DefaultPaths(in.env.getenv); err != nil {
		return err
	}
	in.file, err = hostFile(in.env, in.h, file)
	return err
}

// target is how the host will reach mcpx.
func (in *installer) target(useHTTP bool, url, name string, dryRun bool) (hostconfig.Target, error) {
	env := in.env
	cfg, _, err := loadConfig(env, in.configPath)
	if err != nil {
		return hostconfig.Target{}, err
	}
	if !useHTTP {
		exe := env.Executable
		if !filepath.IsAbs(exe) {
			return hostconfig.Target{}, fmt.Errorf("the path of this executable, %q, is not absolute", exe)
		}
		t := hostconfig.Target{Command: exe, Args: []string{"serve"}, Startup: startupBudget(cfg)}
		if in.configPath != "" {
			abs, err := filepath.Abs(in.configPath)
			if err != nil {
				return t, err
			}
			t.Args = append(t.Args, "--config", abs)
		}
		for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
			if v := env.getenv(k); filepath.IsAbs(v) {
				if t.Env == nil {
					t.Env = map[string]string{}
				}
				t.Env[k] = v
			}
		}
		return t, nil
	}
	if url == "" {
		if cfg.HTTP.Listen == "" || strings.HasSuffix(cfg.HTTP.Listen, ":0") {
			return hostconfig.Target{}, usagef("--http needs mcpx.http.listen set to a fixed port in the config, or --url")
		}
		url = "http://" + cfg.HTTP.Listen + "/mcp"
	}
	if name == "" {
		name = in.h.Name
	}
	if err := hosttoken.CheckTokenName(name); err != nil {
		return hostconfig.Target{}, usagef("%v", err)
	}
	tok := "<the token named " + name + ">"
	if !dryRun {
		if tok, err = namedTokenFor(context.Background(), cfg, in.paths.TokenDir(), name); err != nil {
			return hostconfig.Target{}, err
		}
	}
	return hostconfig.Target{URL: url, Headers: map[string]string{"Authorization": "Bearer " + tok}, Startup: startupBudget(cfg)}, nil
}

// startupBudget is how long a host may wait for mcpx's first tools/list:
// serve may have to start the daemon (connect gives it 15 s), and the
// list waits for every server's start, in parallel, each within its
// startupTimeout (a server with none is left out: no budget bounds it).
// A host whose own timer is shorter (Codex's is 10 s) would otherwise
// go on without any of mcpx's tools while a slow server starts.
func startupBudget(cfg *config.Config) time.Duration {
	longest := cfg.StartupTimeout
	for _, s := range cfg.Servers {
		if !s.Disabled {
			longest = max(longest, s.StartupTimeout)
		}
	}
	return daemonStartWait + longest
}

// record is what install keeps to undo itself: where the host's file
// was, whether it existed, and what install wrote.
type record struct {
	File      string    `json:"file"`
	Existed   bool      `json:"existed"`
	Installed string    `json:"installedSHA256"`
	Moved     []string  `json:"moved,omitempty"`
	Time      time.Time `json:"time"`
}

func (in *installer) recordFile() string {
	return filepath.Join(in.paths.StateDir, "hosts", in.h.Name+".json")
}
func (in *installer) backupFile() string {
	return filepath.Join(in.paths.StateDir, "hosts", in.h.Name+".backup")
}

// readRecord returns the host's install record, nil if there is none.
func (in *installer) readRecord() (*record, error) {
	data, err := os.ReadFile(in.recordFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading %s: %w", in.recordFile(), err)
	}
	return &r, nil
}

func (in *installer) install(t hostconfig.Target, move, force, dryRun bool) error {
	env, h := in.env, in.h
	rec, err := in.readRecord()
	if err != nil {
		return err
	}
	if rec != nil && rec.File != in.file {
		return &exitError{code: ExitToolError, err: fmt.Errorf("mcpx is installed in %s's %s; run mcpx uninstall %s first", h.Title, rec.File, h.Name)}
	}
	before, existed, err := readMaybe(in.file)
	if err != nil {
		return err
	}
	entry, err := h.Entry(t)
	if err != nil {
		return err
	}
	var remove []string
	var cfg *mcpxConfig
	var m *merged
	if move {
		if cfg, m, remove, err = in.moveServers(before, force); err != nil {
			return err
		}
	}
	after, err := h.Edit(before, []hostconfig.Member{{Name: "mcpx", Value: entry}}, remove)
	if err != nil {
		return &exitError{code: ExitToolError, err: fmt.Errorf("editing %s: %w", in.file, err)}
	}
	diff := hostconfig.Diff("a"+in.file, "b"+in.file, before, after)
	if diff == "" {
		diff = "(no change: " + in.file + " already points at mcpx)\n"
	}
	printDiff(env.Stdout, diff)
	if dryRun {
		return nil
	}
	if rec == nil {
		if err := writeFile(in.backupFile(), before, 0o600); err != nil {
			return fmt.Errorf("keeping a backup of %s: %w", in.file, err)
		}
		rec = &record{File: in.file, Existed: existed}
	}
	if cfg != nil && len(m.added) > 0 {
		if err := writeFile(cfg.path, m.data, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "wrote %s: %d servers moved in\n", cfg.path, len(m.added))
		rec.Moved = append(rec.Moved, m.added...)
	}
	if err := writeFile(in.file, after, 0o600); err != nil {
		return err
	}
	rec.Installed, rec.Time = sum(after), time.Now().UTC()
	data, _ := json.MarshalIndent(rec, "", "  ")
	if err := writeFile(in.recordFile(), append(data, '\n'), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s now uses mcpx (%s); the file as it was is kept in %s\n", h.Title, in.file, in.backupFile())
	if t.URL != "" {
		fmt.Fprintf(env.Stdout, "%s reaches mcpx at %s only while a daemon serves it there: a host does not start one over HTTP (run mcpx daemon)\n", h.Title, t.URL)
		if fi, err := os.Stat(in.file); err == nil && fi.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(env.Stderr, "warning: %s is open to other users (mode %v) and now holds %s's token for mcpx: chmod 600 %s\n", in.file, fi.Mode().Perm(), h.Title, in.file)
		}
	}
	return nil
}

// moveServers merges the host's servers into mcpx's config and returns
// the names to remove from the host's file: those taken.
func (in *installer) moveServers(before []byte, force bool) (*mcpxConfig, *merged, []string, error) {
	cfg, err := readMCPXConfig(in.env, in.configPath)
	if err != nil {
		return nil, nil, nil, err
	}
	im, err := hostconfig.Read(in.h, in.file, before, hostconfig.ReadOptions{Separator: cfg.sep, Home: in.env.getenv("HOME")})
	if err != nil {
		return nil, nil, nil, &exitError{code: ExitToolError, err: err}
	}
	// Only the file's own list is edited: Claude Code's per-project lists
	// in ~/.claude.json stay, and so do servers mcpx did not take.
	var own []hostconfig.Entry
	for _, e := range im.Entries {
		if strings.HasPrefix(e.Scope, "local ") {
			e.Server, e.Skipped = nil, "a per-project server of "+strings.TrimPrefix(e.Scope, "local ")+": move it with mcpx import"
		}
		if e.From == "mcpx" {
			continue // a former install's entry, replaced below
		}
		own = append(own, e)
	}
	im.Entries = own
	m, err := cfg.merge(im, force)
	if err != nil {
		return nil, nil, nil, err
	}
	printImport(in.env.Stdout, im, m, force)
	return cfg, m, m.added, nil
}
