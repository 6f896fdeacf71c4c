package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"
)

func cmdDoctor() *command {
	var configPath string
	var asJSON bool
	var timeout time.Duration
	return &command{
		name:   "doctor",
		noArgs: true,
		usage:  "[flags]",
		short:  "check the config, the servers, the hosts' configs and the files",
		long: `
Doctor checks what mcpx needs and says what is wrong:

  config     the config file loads
  server     each enabled server starts and lists its tools, and how long
             that took (each in an mcpx of its own, not the daemon's)
  host       each known host's config: found or not, and whether it points
             at mcpx (an entry running an mcpx that is not there is wrong)
  files      the config, the token files and the state dir are not open to
             other users (the config says what mcpx runs; tokens open it)
  store      the job store: the embedded file is not open to other users;
             a shared PostgreSQL store answers and its schema is one
             this build can use (doctor never migrates it)
  daemon     no daemon of another build of mcpx still serves this config

Each line is ok, info (nothing wrong), warn or fail. The exit code is 0
only when nothing warns or fails, else 1.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&asJSON, "json", false, "print the checks as JSON")
			fs.DurationVar(&timeout, "timeout", time.Minute, "how long each server may take to start and list its tools")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if timeout <= 0 {
				return usagef("--timeout must be positive")
			}
			d := &doctor{env: env, configPath: configPath, timeout: timeout}
			d.run(ctx)
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					OK     bool    `json:"ok"`
					Checks []check `json:"checks"`
				}{d.ok(), d.checks}); err != nil {
					return err
				}
			} else {
				printChecks(env.Stdout, d.checks)
			}
			if !d.ok() {
				return &exitError{code: ExitToolError, err: errSilent}
			}
			return nil
		},
	}
}

// Check levels.
const (
	levelOK   = "ok"
	levelInfo = "info"
	levelWarn = "warn"
	levelFail = "fail"
)

// check is one line of the doctor's report.
type check struct {
	Kind   string  `json:"kind"` // config, server, host, files, store, daemon
	Name   string  `json:"name"`
	Level  string  `json:"level"`
	Detail string  `json:"detail"`
	Tools  *int    `json:"tools,omitempty"`
	TookMs float64 `json:"tookMs,omitempty"`
}

type doctor struct {
	env        *Env
	configPath string
	timeout    time.Duration
	checks     []check
}

func (d *doctor) add(kind, name, level, format string, args ...any) {
	d.checks = append(d.checks, check{Kind: kind, Name: name, Level: level, Detail: fmt.Sprintf(format, args...)})
}

func (d *doctor) ok() bool {
	for _, c := range d.checks {
		if c.Level == levelWarn || c.Level == levelFail {
			return false
		}
	}
	return true
}

func (d *doctor) run(ctx context.Context) {
	cfg, paths, err := loadConfig(d.env, d.configPath)
	switch {
	case err != nil:
		d.add("config", "config", levelFail, "%v", err)
	case cfg.File == "":
		d.add("config", "config", levelInfo, "no config file: mcpx runs its built-in demo config (%d server)", len(cfg.Servers))
	default:
		d.add("config", cfg.File, levelOK, "loads: %d servers", len(cfg.Servers)+len(cfg.Unconfigured))
	}
	if err == nil {
		d.servers(ctx, cfg)
	}
	d.hosts(cfg)
	if err == nil || paths.StateDir != "" {
		d.files(cfg, paths)
	}
	if err == nil {
		d.store(ctx, cfg, paths)
		d.daemons(ctx, cfg, paths)
	}
}

func printChecks(w io.Writer, checks []check) {
	for _, c := range checks {
		extra := ""
		if c.Tools != nil {
			extra = fmt.Sprintf(" (%d tools in %s)", *c.Tools, time.Duration(c.TookMs*float64(time.Millisecond)).Round(time.Millisecond))
		}
		fmt.Fprintf(w, "%-4s  %-6s  %s: %s%s\n", c.Level, c.Kind, c.Name, c.Detail, extra)
	}
}
