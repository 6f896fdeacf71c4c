package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/oauth"
)

// loginTimeout bounds the wait for the user to finish in the browser.
const loginTimeout = 5 * time.Minute

func cmdLogin() *command {
	var configPath string
	return &command{
		name:  "login",
		usage: "SERVER",
		short: "sign in to an HTTP server that requires OAuth",
		long: `
Login signs in to SERVER, an http server of the config that requires an OAuth
sign-in (as the MCP authorization spec describes): it discovers the server's
authorization server, registers mcpx with it unless the server's "oauth"
settings name a client id, and opens the authorization URL with $BROWSER (or
prints it when $BROWSER is unset); the browser's redirect comes back to mcpx
on a loopback port. The tokens are stored, readable by you alone, in the state
directory, where the daemon and every host it serves use them, and refresh
them. Run it again to sign in anew (or with the scopes a server asked for).

Login needs no daemon: it runs here, where the browser is.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			srv, store, prev, err := signIn(env, configPath, args)
			if err != nil {
				return err
			}
			if prev != nil && prev.ServerURL != srv.URL {
				prev = nil // signed in to the server's old URL
			}
			ctx, cancel := context.WithTimeoutCause(ctx, loginTimeout, errors.New("the sign-in was not finished within 5 minutes"))
			defer cancel()
			client := &oauth.Client{HTTP: &http.Client{Timeout: 30 * time.Second}}
			rec, err := client.SignIn(ctx, oauth.LoginRequest{
				Server: srv.Name, URL: srv.URL, Settings: oauth.SettingsOf(srv.OAuth), Previous: prev,
				Browser: browser(env),
			}, store.Save)
			if err != nil {
				return fmt.Errorf("signing in to %q: %w", srv.Name, err)
			}
			fmt.Fprintf(env.Stdout, "signed in to %s (%s)\n", srv.Name, expiry(rec, time.Now()))
			return nil
		},
	}
}

// signInServer returns the http server args name.
func signInServer(env *Env, configPath string, args []string) (*config.Server, config.Paths, error) {
	if len(args) != 1 {
		return nil, config.Paths{}, usagef("want one SERVER")
	}
	cfg, paths, err := loadConfig(env, configPath)
	if err != nil {
		return nil, paths, err
	}
	srv, ok := cfg.Servers[args[0]]
	switch {
	case !ok:
		return nil, paths, usagef("no server %q in the config", args[0])
	case srv.Transport == config.TransportStdio:
		return nil, paths, usagef("%q is a stdio server: it takes its credentials from its environment, not a sign-in", args[0])
	}
	return srv, paths, nil
}

// signIn is signInServer with the server's stored sign-in and its store;
// rec is nil when there is none.
func signIn(env *Env, configPath string, args []string) (srv *config.Server, store *oauth.Store, rec *oauth.Record, err error) {
	srv, paths, err := signInServer(env, configPath, args)
	if err != nil {
		return nil, nil, nil, err
	}
	store = &oauth.Store{Dir: paths.OAuthDir()}
	rec, err = store.Load(srv.Name)
	if errors.Is(err, oauth.ErrNoRecord) {
		return srv, store, nil, nil
	}
	return srv, store, rec, err
}

// browser shows the authorization URL: always on stdout, for a user to
// open by hand, and with $BROWSER URL when $BROWSER is set.
func browser(env *Env) oauth.Browser {
	return func(ctx context.Context, authURL string) error {
		fmt.Fprintf(env.Stdout, "Open this URL to sign in:\n\n  %s\n\nWaiting for the browser's redirect...\n", authURL)
		fields := strings.Fields(env.getenv("BROWSER"))
		if len(fields) == 0 {
			return nil
		}
		cmd := exec.Command(fields[0], append(fields[1:], authURL)...)
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(env.Stderr, "mcpx: could not run $BROWSER (%v): open the URL by hand\n", err)
			return nil
		}
		// Not waited for: a browser may run long after the sign-in, and
		// mcpx login exits as soon as it is done.
		_ = cmd.Process.Release()
		return nil
	}
}

// expiry says when rec's access token expires.
func expiry(rec *oauth.Record, now time.Time) string {
	switch {
	case rec.Token.Expiry.IsZero():
		return "the token has no expiry"
	case rec.Token.Expiry.Before(now) && rec.Token.RefreshToken != "":
		return "token expired " + ago(now, rec.Token.Expiry) + " ago; refreshed on next use"
	case rec.Token.Expiry.Before(now):
		return "token expired " + ago(now, rec.Token.Expiry) + " ago; sign in again"
	}
	return "token expires in " + ago(rec.Token.Expiry, now)
}
