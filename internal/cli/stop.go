package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/localclient"
	"mcpx/internal/sock"
)

func cmdStop() *command {
	var configPath string
	return &command{
		name:   "stop",
		noArgs: true,
		short:  "stop the daemon (its calls end with \"mcpx is stopping\")",
		long: `
Stop asks the daemon serving this config to stop and waits until it has: its
calls in flight end with the error "mcpx is stopping" (upstreams are told with
notifications/cancelled), then its upstream servers are shut down.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			c, files := client(env, cfg, paths)
			err = c.Shutdown(ctx)
			if errors.Is(err, localclient.ErrNoDaemon) && configPath == "" && cfg.File != "" {
				// The default config file may have been written after a
				// daemon of the built-in default started: stop that one.
				c, files = client(env, config.Default(env.Executable), paths)
				err = c.Shutdown(ctx)
			}
			if errors.Is(err, localclient.ErrNoDaemon) {
				fmt.Fprintln(env.Stdout, "no daemon was running")
				return nil
			} else if err != nil {
				return err
			}
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				// The daemon holds its lock until its last upstream is gone.
				if unlock, err := sock.Lock(files.Lock); err == nil {
					unlock()
					fmt.Fprintln(env.Stdout, "daemon stopped")
					return nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			return errors.New("the daemon did not stop within 15s")
		},
	}
}
