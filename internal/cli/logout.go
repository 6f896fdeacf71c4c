package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/localclient"
	"mcpx/internal/oauth"
)

func cmdLogout() *command {
	var configPath, principal, gateway string
	return &command{
		name:  "logout",
		usage: "[-principal ID | -gateway URL] SERVER",
		short: "revoke and forget the sign-in to an HTTP server",
		long: `
Logout revokes SERVER's tokens at its authorization server (RFC 7009, where
the server offers revocation) and deletes them from the state directory; the
daemon stops using them at once, and calls to the server then fail with a
message saying to run mcpx login. A failed revocation is reported and the
tokens are deleted all the same.

On a server whose accounts are per-person (oauth.accounts), each person has
a sign-in of their own. -gateway URL ends yours at a gateway you reach over
HTTP, as the holder of the token in $MCPX_TOKEN; -principal ID ends anyone's
through the daemon of this config (its operator, on its socket).`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.StringVar(&principal, "principal", "", "end this principal's own sign-in to a per-person SERVER, through the daemon")
			fs.StringVar(&gateway, "gateway", "", "end your own sign-in to a per-person SERVER at this gateway URL (token: $MCPX_TOKEN)")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if principal != "" || gateway != "" {
				return personLogout(ctx, env, configPath, principal, gateway, args)
			}
			srv, cfg, paths, err := signInServer(env, configPath, args)
			if err != nil {
				return err
			}
			recs, rec, closeRecs, err := signInOf(ctx, env, srv, cfg, paths)
			if err != nil {
				return err
			}
			defer closeRecs()
			if rec == nil {
				fmt.Fprintf(env.Stdout, "not signed in to %s\n", srv.Name)
				return nil
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var (
				revoked bool
				rerr    error
			)
			audRec := audit.Record{Kind: audit.KindSignOut, Action: "mcpx logout", Server: srv.Name, Outcome: "ok", Detail: "the shared sign-in"}
			err = auditor{env: env, cfg: cfg, paths: paths}.change(ctx, audRec, func() error {
				client := &oauth.Client{HTTP: &http.Client{Timeout: 15 * time.Second}}
				revoked, rerr = client.Revoke(ctx, rec)
				return recs.Delete(ctx, srv.Name)
			})
			if err != nil {
				return err
			}
			switch {
			case rerr != nil:
				fmt.Fprintf(env.Stderr, "mcpx: %v\n", rerr)
				fmt.Fprintf(env.Stdout, "signed out of %s: tokens deleted, not revoked\n", srv.Name)
			case revoked:
				fmt.Fprintf(env.Stdout, "signed out of %s: tokens revoked and deleted\n", srv.Name)
			default:
				fmt.Fprintf(env.Stdout, "signed out of %s: tokens deleted (the server offers no revocation)\n", srv.Name)
			}
			return nil
		},
	}
}

// personLogout ends a person's own sign-in to a per-person server
// through a gateway's DELETE /v1/signins/SERVER: the caller's, at
// gateway with $MCPX_TOKEN, or principal's, through the config's daemon.
func personLogout(ctx context.Context, env *Env, configPath, principal, gateway string, args []string) error {
	if len(args) != 1 {
		return usagef("want one SERVER")
	}
	var c *localclient.Client
	switch {
	case principal != "" && gateway != "":
		return usagef("-principal and -gateway exclude each other: -gateway ends your own sign-in")
	case gateway != "":
		tok := env.getenv("MCPX_TOKEN")
		if tok == "" {
			return usagef("-gateway needs your token for the gateway in $MCPX_TOKEN")
		}
		c = &localclient.Client{Gateway: gateway, Token: tok, Version: env.Version}
	default:
		cfg, paths, err := loadConfig(env, configPath)
		if err != nil {
			return err
		}
		c, _ = client(env, cfg, paths)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.RevokeSignIn(ctx, args[0], principal)
	if err != nil {
		return err
	}
	switch {
	case out.RevokeError != "":
		fmt.Fprintf(env.Stderr, "mcpx: %s\n", out.RevokeError)
		fmt.Fprintf(env.Stdout, "signed %s out of %s: tokens deleted, not revoked\n", out.Principal, out.Server)
	case out.Revoked:
		fmt.Fprintf(env.Stdout, "signed %s out of %s: tokens revoked and deleted\n", out.Principal, out.Server)
	default:
		fmt.Fprintf(env.Stdout, "signed %s out of %s: tokens deleted (the server offers no revocation)\n", out.Principal, out.Server)
	}
	return nil
}
