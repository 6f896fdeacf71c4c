package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"mcpx/internal/audit"
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
settings name a client id, and prints the sign-in's start, a link that works
once, and opens it with $BROWSER (given a page readable by you alone, never
the link on a command line); the browser's redirect comes back to mcpx on a
loopback port, taken only from the browser that opened the start. The
tokens are stored, readable by you alone, in the state directory, where the
daemon and every host it serves use them, and refresh them; with a
PostgreSQL store (mcpx.store) they go into the store instead, sealed with
the key mcpx.oauth.keyFile or keyEnv names, for every replica.
Run it again to sign in anew (or with the scopes a server asked for).

Login needs no daemon: it runs here, where the browser is.`,
		setFlags: func(fs *flag.FlagSet) { configFlag(fs, &configPath) },
		run: func(ctx context.Context, env *Env, args []string) error {
			srv, cfg, paths, err := signInServer(env, configPath, args)
			if err != nil {
				return err
			}
			recs, prev, closeRecs, err := signInOf(ctx, env, srv, cfg, paths)
			if err != nil {
				return err
			}
			defer closeRecs()
			aud := auditor{env: env, cfg: cfg, paths: paths}
			audRec := audit.Record{Kind: audit.KindSignIn, Action: "mcpx login", Server: srv.Name, Outcome: "ok", Detail: "the shared sign-in"}
			if prev != nil && prev.ServerURL != srv.URL {
				prev = nil // signed in to the server's old URL
			}
			ctx, cancel := context.WithTimeoutCause(ctx, loginTimeout, errors.New("the sign-in was not finished within 5 minutes"))
			defer cancel()
			// Recorded before the browser step: a log that cannot be
			// written (failing closed) refuses the sign-in before the
			// person signs in for nothing; one that fails after it
			// leaves a second record, "failed".
			if err := aud.record(ctx, audRec); err != nil {
				return err
			}
			client := &oauth.Client{HTTP: &http.Client{Timeout: 30 * time.Second}}
			show, removePage := browser(env)
			rec, err := client.SignIn(ctx, oauth.LoginRequest{
				Server: srv.Name, URL: srv.URL, Settings: oauth.SettingsOf(srv.OAuth), Previous: prev,
				Browser: show,
			}, func(r *oauth.Record) error { return recs.Save(ctx, r) })
			removePage() // the browser read it long before the redirect came
			if err != nil {
				aud.failed(ctx, audRec, err)
				return fmt.Errorf("signing in to %q: %w", srv.Name, err)
			}
			fmt.Fprintf(env.Stdout, "signed in to %s (%s)\n", srv.Name, expiry(rec.Token.Expiry, rec.Token.RefreshToken != "", time.Now()))
			return nil
		},
	}
}

// signInServer returns the http server args name, and its config.
func signInServer(env *Env, configPath string, args []string) (*config.Server, *config.Config, config.Paths, error) {
	if len(args) != 1 {
		return nil, nil, config.Paths{}, usagef("want one SERVER")
	}
	cfg, paths, err := loadConfig(env, configPath)
	if err != nil {
		return nil, nil, paths, err
	}
	if e, ok := cfg.Unconfigured[args[0]]; ok {
		return nil, nil, paths, usagef("server %q is not configured: %s", args[0], e.Reason())
	}
	srv, ok := cfg.Servers[args[0]]
	switch {
	case !ok:
		return nil, nil, paths, usagef("no server %q in the config", args[0])
	case srv.Transport == config.TransportStdio:
		return nil, nil, paths, usagef("%q is a stdio server: it takes its credentials from its environment, not a sign-in", args[0])
	}
	return srv, cfg, paths, nil
}

// signInOf is where cfg keeps sign-ins, and srv's stored sign-in; rec
// is nil when there is none. close releases the records.
func signInOf(ctx context.Context, env *Env, srv *config.Server, cfg *config.Config, paths config.Paths) (recs oauth.Records, rec *oauth.Record, close func(), err error) {
	recs, close, err = signInRecords(ctx, env, cfg, paths)
	if err != nil {
		return nil, nil, nil, err
	}
	rec, err = recs.Load(ctx, srv.Name)
	if errors.Is(err, oauth.ErrNoRecord) {
		return recs, nil, close, nil
	}
	if err != nil {
		close()
		return nil, nil, nil, err
	}
	return recs, rec, close, nil
}

// browser shows the URL that starts the sign-in: always on stdout, for a
// user to open by hand, and through a redirect page (never on a command
// line) with $BROWSER when $BROWSER is set. done removes the page.
func browser(env *Env) (show oauth.Browser, done func()) {
	var page *openedPage
	show = func(ctx context.Context, startURL string) error {
		fmt.Fprintf(env.Stdout, "Open this URL to sign in:\n\n  %s\n\nWaiting for the browser's redirect...\n", startURL)
		fields := strings.Fields(env.getenv("BROWSER"))
		if len(fields) == 0 {
			return nil
		}
		p, err := openPage(env, fields, startURL)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcpx: could not run $BROWSER (%v): open the URL by hand\n", err)
			return nil
		}
		// Not waited for: a browser may run long after the sign-in, and
		// mcpx login exits as soon as it is done.
		p.release()
		page = p
		return nil
	}
	return show, func() {
		if page != nil {
			page.remove()
		}
	}
}

// expiry says when an access token expires.
func expiry(at time.Time, refreshable bool, now time.Time) string {
	switch {
	case at.IsZero():
		return "the token has no expiry"
	case at.Before(now) && refreshable:
		return "token expired " + ago(now, at) + " ago; refreshed on next use"
	case at.Before(now):
		return "token expired " + ago(now, at) + " ago; sign in again"
	}
	return "token expires in " + ago(at, now)
}
