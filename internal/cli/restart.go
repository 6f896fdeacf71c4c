package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"

	"mcpx/internal/localclient"
)

func cmdRestart() *command {
	var configPath string
	return &command{
		name:  "restart",
		usage: "SERVER",
		short: "restart one upstream server of the running daemon",
		long: `
Restart stops the upstream server SERVER of the daemon serving this config
(its calls in flight end with an error saying it was restarted; the server
is told of each cancellation) and starts it again at once, whatever wait
its failed starts or crashes had set. The live view's restart button does
the same.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("restart takes one server name")
			}
			c, _, cfg, err := daemonOf(env, configPath)
			if err != nil {
				return err
			}
			if e, ok := cfg.Unconfigured[args[0]]; ok {
				return usagef("server %q is not configured: %s", args[0], e.Reason())
			}
			if _, ok := cfg.Servers[args[0]]; !ok {
				return usagef("no server %q in the config (the servers are %s)", args[0], strings.Join(cfg.Names(), ", "))
			}
			err = c.Restart(ctx, args[0])
			var de *localclient.DaemonError
			if errors.As(err, &de) && de.Status == http.StatusNotFound {
				return &exitError{ExitUsage, err} // the daemon runs an older config
			}
			if errors.Is(err, localclient.ErrNoDaemon) {
				fmt.Fprintln(env.Stdout, "no daemon is running; the next call starts the server")
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "restarting %s\n", args[0])
			return nil
		},
	}
}
