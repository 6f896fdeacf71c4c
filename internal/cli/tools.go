package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

func cmdTools() *command {
	var configPath string
	var asJSON bool
	return &command{
		name:  "tools",
		usage: "[flags] [words...]",
		short: "list the tools of every server, or search them by words",
		long: `
Tools lists every tool behind mcpx under the name hosts see, or, given words,
the tools that match them best. It starts the daemon and the upstream servers
if needed. Servers that cannot be listed are named on stderr.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&asJSON, "json", false, "print JSON, with input schemas")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			c, err := connectTo(ctx, env, configPath)
			if err != nil {
				return err
			}
			res, err := c.Tools(ctx, strings.Join(args, " "))
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			// A terminal gets each description cut to its width at a word;
			// a pipe gets it whole (its reader decides what to show).
			width := 0
			if f, ok := env.Stdout.(*os.File); ok {
				if w, tty := terminalWidth(f); tty {
					width = w
				}
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			for _, t := range res.Tools {
				desc := t.Description
				if i := strings.IndexByte(desc, '\n'); i >= 0 {
					desc = desc[:i]
				}
				desc = progressSanitize(desc)
				if width > 0 {
					desc = wordTruncate(desc, max(10, width-len(t.Name)-4))
				}
				fmt.Fprintf(tw, "%s\t%s\n", t.Name, desc)
			}
			tw.Flush()
			if len(res.Tools) == 0 {
				if len(args) > 0 {
					fmt.Fprintf(env.Stderr, "no tools match %q\n", strings.Join(args, " "))
				} else {
					fmt.Fprintln(env.Stderr, "no tools")
				}
			}
			for _, server := range slices.Sorted(maps.Keys(res.Errors)) {
				fmt.Fprintf(env.Stderr, "server %s is unavailable: %s\n", server, res.Errors[server])
			}
			return nil
		},
	}
}

// wordTruncate cuts s to at most cols columns at a word boundary, marking
// the cut with "…"; a first word longer than that is cut inside.
func wordTruncate(s string, cols int) string {
	if progressTruncate(s, cols) == s {
		return s
	}
	cut := progressTruncate(s, cols-1)
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
