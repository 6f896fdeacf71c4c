package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/config"
	"mcpx/internal/hosttoken"
)

func cmdToken() *command {
	var (
		showPath   bool
		name       string
		list       bool
		revoke     string
		configPath string
	)
	return &command{
		name:   "token",
		noArgs: true,
		usage:  "[--name NAME | --list | --revoke NAME] [--path] [--config FILE]",
		short:  "print, mint, list or revoke the bearer tokens of HTTP hosts",
		long: `
Token prints the bearer token that HTTP hosts must send to mcpx's MCP
endpoint on TCP ("Authorization: Bearer <token>"), creating it on first use:
32 random bytes in $XDG_STATE_HOME/mcpx/token (mode 0600), one for every
daemon and "mcpx serve --http" of this user. Delete the file and restart what
serves HTTP for a new token. The unix socket needs no token.

Every host holding the default token is one host to mcpx. A host given a
token of its own (--name) is a host of its own: mcpx binds its sessions, and
the state it hands it to resume a call, to that token, and names it in its
logs by the name and a fingerprint of the token. --name prints the named
token, minting it on first use, in $XDG_STATE_HOME/mcpx/tokens/NAME; a name
is 1 to 32 lower-case letters, digits, '-' and '_'. --list lists the names (never the tokens) and when each
was minted. --revoke deletes a named token: whatever serves HTTP refuses it
from the next request on, with no restart; mint it again for a new one (a
new host to mcpx: what was bound to the old token is not its).

Replicas (a config whose mcpx.store names a PostgreSQL database) accept the
named tokens the store holds, by their SHA-256, never the token itself:
--name mints the token here and puts its hash in the store, and every replica
accepts it from its first request; --revoke removes it there, and every
replica refuses it within 2 seconds; --list lists the store's. The token's
value is kept only in the file where it was minted.`,
		setFlags: func(fs *flag.FlagSet) {
			fs.BoolVar(&showPath, "path", false, "print the token file's path instead (with --list, the named tokens' dir)")
			fs.StringVar(&name, "name", "", "print the token named `NAME`, minting it on first use")
			fs.BoolVar(&list, "list", false, "list the named tokens")
			fs.StringVar(&revoke, "revoke", "", "revoke the token named `NAME`")
			configFlag(fs, &configPath)
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if (name != "" && list) || (name != "" && revoke != "") || (list && revoke != "") {
				return usagef("--name, --list and --revoke exclude each other")
			}
			if revoke != "" && showPath {
				return usagef("--path does not go with --revoke")
			}
			for _, n := range []string{name, revoke} {
				if n == "" {
					continue
				}
				if err := hosttoken.CheckTokenName(n); err != nil {
					return usagef("%v", err)
				}
			}
			paths, err := config.DefaultPaths(env.getenv)
			if err != nil {
				return err
			}
			dir := paths.TokenDir()
			// Named tokens: the config says whether replicas share them.
			shared := &config.Config{}
			if name != "" || revoke != "" || (list && !showPath) {
				if shared, _, err = loadConfig(env, configPath); err != nil {
					return err
				}
			}
			switch {
			case list && showPath:
				_, err = fmt.Fprintln(env.Stdout, dir)
				return err
			case list:
				infos, err := hosttoken.ListTokens(dir)
				if shared.Store != "" {
					infos, err = hosttoken.ListShared(ctx, shared.Store)
				}
				if err != nil {
					return err
				}
				return printTokens(env.Stdout, infos)
			case revoke != "":
				var err error
				if _, serr := os.Lstat(filepath.Join(dir, revoke)); shared.Store == "" && errors.Is(serr, fs.ErrNotExist) {
					err = hosttoken.ErrNoToken // nothing to change, nothing to record
				} else {
					err = auditor{env: env, cfg: shared, paths: paths}.change(ctx, tokenRecord("revoke", revoke), func() error {
						if shared.Store != "" {
							return hosttoken.RevokeShared(ctx, shared.Store, dir, revoke)
						}
						return hosttoken.RevokeToken(dir, revoke)
					})
				}
				if errors.Is(err, hosttoken.ErrNoToken) {
					return &exitError{code: ExitUsage, err: fmt.Errorf("no token is named %q (mcpx token --list lists them)", revoke)}
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(env.Stdout, "revoked token %s\n", revoke)
				return err
			}
			file, tok := paths.TokenFile(), ""
			if name != "" {
				file = filepath.Join(dir, name)
			}
			mint := func() (err error) {
				if name != "" {
					tok, err = namedTokenFor(ctx, shared, dir, name)
				} else {
					tok, err = config.Token(file)
				}
				return err
			}
			if _, serr := os.Lstat(file); errors.Is(serr, fs.ErrNotExist) {
				// A token minted here is a change, recorded before it is made.
				if name == "" {
					if shared, _, err = loadConfig(env, configPath); err != nil {
						return err
					}
				}
				err = auditor{env: env, cfg: shared, paths: paths}.change(ctx, tokenRecord("mint", name), mint)
			} else {
				err = mint()
			}
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

// tokenRecord is the audit record of a token's mint or revoke (action);
// name "" is the default token. The token itself is never in it.
func tokenRecord(action, name string) audit.Record {
	detail := "the token named " + name
	if name == "" {
		detail = "the default token"
	}
	return audit.Record{Kind: audit.KindToken, Action: action, Outcome: "ok", Detail: detail}
}

// printTokens writes one line per named token: its name, when it was
// minted, and why it is refused, if it is.
func printTokens(w io.Writer, infos []hosttoken.TokenInfo) error {
	width := 0
	for _, in := range infos {
		width = max(width, len(in.Name))
	}
	for _, in := range infos {
		line := fmt.Sprintf("%-*s  %s", width, in.Name, in.Created.Local().Format(time.DateTime))
		if in.Err != nil {
			line += "  refused: " + in.Err.Error()
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
