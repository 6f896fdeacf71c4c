package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"mcpx/internal/oauth"
)

func cmdLogout() *command {
	var configPath string
	return &command{
		name:  "logout",
		usage: "SERVER",
		short: "revoke and forget the sign-in to an HTTP server",
		long: `
Logout revokes SERVER's tokens at its authorization server (RFC 7009, where
the server offers revocation) and deletes them from the state directory; the
daemon stops using them at once, and calls to the server then fail with a
message saying to run mcpx login. A failed revocation is reported and the
tokens are deleted all the same.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			srv, recs, rec, closeRecs, err := signIn(ctx, env, configPath, args)
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
			client := &oauth.Client{HTTP: &http.Client{Timeout: 15 * time.Second}}
			revoked, rerr := client.Revoke(ctx, rec)
			if err := recs.Delete(ctx, srv.Name); err != nil {
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
