package cli

import (
	"context"
	"flag"
	"fmt"

	"mcpx/internal/hostconfig"
)

func cmdImport() *command {
	var configPath string
	var dryRun, force bool
	return &command{
		name:  "import",
		usage: "[flags] HOST [FILE]",
		short: "take a host's MCP servers into mcpx's config",
		long: `
Import reads the MCP servers of a host's config file into mcpx's config:
HOST is one of ` + hostconfig.Names() + `. FILE
defaults to the host's user-wide file (a project's file may be named
instead: a .mcp.json, .cursor/mcp.json, .vscode/mcp.json, opencode.json).

Each server is reported: taken, renamed (mcpx's names allow fewer
characters), skipped with the reason (a field mcpx cannot honour, such as
a headers helper or a value read from a file), or not taken because mcpx
already has a server of that name (--force replaces it). Fields that are
not taken as they were are listed under their server. The host's own
variables become mcpx ${VAR} references (VS Code's ${input:ID} becomes
${ID}, upper-cased); the variables to set in mcpx's environment are listed.

The config file keeps its other contents and their order; a missing one
is created. The host's file is not changed (mcpx install --move does that).`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&dryRun, "dry-run", false, "print the resulting config instead of writing it (the report goes to stderr)")
			fs.BoolVar(&force, "force", false, "replace mcpx's servers of the same names")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("want HOST and at most one FILE")
			}
			h, err := lookupHost(args[0])
			if err != nil {
				return err
			}
			file := ""
			if len(args) == 2 {
				file = args[1]
			}
			if file, err = hostFile(env, h, file); err != nil {
				return err
			}
			data, existed, err := readMaybe(file)
			if err == nil && !existed {
				err = fmt.Errorf("%s does not exist", file)
			}
			if err != nil {
				return &exitError{code: ExitToolError, err: fmt.Errorf("reading %s's config: %w", h.Title, err)}
			}
			cfg, err := readMCPXConfig(env, configPath)
			if err != nil {
				return err
			}
			im, err := hostconfig.Read(h, file, data, hostconfig.ReadOptions{Separator: cfg.sep, Home: env.getenv("HOME")})
			if err != nil {
				return &exitError{code: ExitToolError, err: err}
			}
			m, err := cfg.merge(im, force)
			if err != nil {
				return err
			}
			report := env.Stdout
			if dryRun {
				report = env.Stderr
			}
			fmt.Fprintf(report, "%s: %d servers in %s\n", h.Title, len(im.Entries), file)
			printImport(report, im, m, force)
			if dryRun {
				_, err := env.Stdout.Write(m.data)
				return err
			}
			if len(m.added) == 0 {
				fmt.Fprintf(report, "nothing to write: %s is unchanged\n", cfg.path)
				return nil
			}
			if err := writeFile(cfg.path, m.data, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(report, "wrote %s: %d servers added or replaced (mcpx reload, or a running daemon's watch, applies them)\n", cfg.path, len(m.added))
			return nil
		},
	}
}
