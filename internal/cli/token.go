package cli

import (
	"context"
	"flag"
	"fmt"

	"mcpx/internal/config"
)

func cmdToken() *command {
	var showPath bool
	return &command{
		name:  "token",
		short: "print the bearer token HTTP hosts send to mcpx (creating it)",
		long: `
Token prints the bearer token that HTTP hosts must send to mcpx's MCP
endpoint on TCP ("Authorization: Bearer <token>"), creating it on first use:
32 random bytes in $XDG_STATE_HOME/mcpx/token (mode 0600), one for every
daemon and "mcpx serve --http" of this user. Delete the file and restart what
serves HTTP for a new token. The unix socket needs no token.`,
		setFlags: func(fs *flag.FlagSet) {
			fs.BoolVar(&showPath, "path", false, "print the token file's path instead")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			paths, err := config.DefaultPaths(env.getenv)
			if err != nil {
				return err
			}
			file := paths.TokenFile()
			tok, err := config.Token(file)
			if err != nil {
				return err
			}
			if showPath {
				tok = file
			}
			_, err = fmt.Fprintln(env.Stdout, tok)
			return err
		},
	}
}
