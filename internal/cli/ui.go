package cli

import (
	"context"
	"flag"
	"fmt"
)

func cmdUI() *command {
	var configPath string
	var open bool
	return &command{
		name:   "ui",
		noArgs: true,
		short:  "print a one-time link to the daemon's live view",
		long: `
UI prints a one-time link to the live view of the daemon serving this config
(starting one if none runs): its servers (state, pid, protocol revision,
starts), the hosts connected, the calls in flight with their progress, and
recent cancels and errors with their causes, updated live, with buttons to
cancel a call and restart a server. The page is served by the daemon on its
HTTP listener (mcpx.http.listen) if it has one, else on a loopback port of
its own. The link works once, in one browser tab, and expires after a
minute unused. With --open, xdg-open opens it, given not the link (a
command line is readable by every local user) but a page readable by you
alone that leads to it; the page is removed within a minute.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&open, "open", false, "open the link with xdg-open")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			c, err := connectTo(ctx, env, configPath)
			if err != nil {
				return err
			}
			link, err := c.UILink(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, link)
			if open {
				p, err := openPage(env, []string{"xdg-open"}, link)
				if err != nil {
					return fmt.Errorf("opening the link with xdg-open: %w", err)
				}
				if err := p.wait(); err != nil {
					p.remove()
					return fmt.Errorf("opening the link with xdg-open: %w", err)
				}
			}
			return nil
		},
	}
}
