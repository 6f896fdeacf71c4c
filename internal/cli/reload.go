package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"mcpx/internal/localclient"
)

func cmdReload() *command {
	var configPath string
	return &command{
		name:   "reload",
		noArgs: true,
		short:  "apply edits of the config file to the running daemon",
		long: `
Reload checks the config file, then has the daemon serving it re-read it:
servers added are started on first use, servers removed or changed are
stopped (their calls in flight end with an error saying so), and the calls
of unchanged servers go on undisturbed. The daemon also does this by itself
within a second of the file changing; reload lists what changed since the
last reload (or the daemon's start), edits it applied by itself included.
Settings that shape listeners or tool names (mcpx.http, mcpx.toolNames, ...)
need "mcpx stop" to take effect.

${VAR} references are expanded with the values this command's environment
has for them (it sends the daemon those the file names), else with the
daemon's environment; the daemon keeps them for its later reloads. A server
whose own entry has a mistake (an unset variable, a bad field) is not
configured: it is named here and in "mcpx status", and the other servers
run. A file that cannot be read changes nothing, and "mcpx status" shows
why until a reload succeeds.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			c, _, cfg, err := daemonOf(env, configPath)
			if err != nil {
				return err
			}
			if cfg.File == "" {
				return usagef("there is no config file to reload (the built-in config is in use)")
			}
			res, err := c.Reload(ctx, configVars(env, cfg.File))
			if errors.Is(err, localclient.ErrNoDaemon) {
				fmt.Fprintln(env.Stdout, "no daemon is running; the next command starts one with this config")
				return nil
			}
			if err != nil {
				return err
			}
			list := func(names []string) string {
				if len(names) == 0 {
					return "-"
				}
				return strings.Join(names, ", ")
			}
			fmt.Fprintf(env.Stdout, "added     %s\nremoved   %s\nchanged   %s\nunchanged %s\n",
				list(res.Added), list(res.Removed), list(res.Changed), list(res.Unchanged))
			for _, name := range slices.Sorted(maps.Keys(res.Unconfigured)) {
				fmt.Fprintf(env.Stderr, "mcpx: server %s is not configured: %s\n", name, res.Unconfigured[name])
			}
			if len(res.Ignored) > 0 {
				fmt.Fprintf(env.Stderr, "mcpx: %s changed; run mcpx stop for that to take effect\n", strings.Join(res.Ignored, ", "))
			}
			return nil
		},
	}
}
