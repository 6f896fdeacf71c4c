package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"

	"mcpx/internal/config"
	"mcpx/internal/oauth"
	"mcpx/internal/store"
)

// signInRecords opens where the upstream sign-ins are kept: with a shared
// store (replicas), the store, each sealed with the key the config names,
// which is not in the database; else the files of the sign-in directory,
// which `mcpx login` writes. Either way every gateway and `mcpx login`
// using the same place share one sign-in per server. A key or a store
// that fails leaves records that say so on every use (status, calls).
// nil when there is no place at all; close releases the store.
//
// The sign-ins have a pool of their own, apart from the jobs': a refresh
// holds its connection (the row's lock) across the token request, up to
// that request's timeout, and slow refreshes must not leave the jobs'
// lease renewals waiting for a connection.
func (o *Options) signInRecords(log *slog.Logger) (recs oauth.Records, close func()) {
	close = func() {}
	if url := o.Config.Store; url != "" {
		keys, err := oauth.LoadKeys(o.Config.SignInKey, os.Getenv)
		switch {
		case errors.Is(err, oauth.ErrNoKey):
			// No key named: fine for replicas whose servers need no
			// sign-in; one that does says so on every call and in status.
			log.Info("upstream sign-ins are off: no sign-in key for the shared store", "err", err)
			return oauth.Unavailable{Err: err}, close
		case err != nil:
			log.Error("upstream sign-ins cannot be used", "err", err)
			return oauth.Unavailable{Err: err}, close
		}
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		open := store.OpenPostgres
		if o.LookOnly {
			open = store.OpenPostgresAsIs
		}
		st, err := open(ctx, url)
		if err != nil {
			log.Error("upstream sign-ins cannot be used: opening the shared store failed", "store", store.Redact(url), "err", err)
			return oauth.Unavailable{Err: err}, close
		}
		log.Info("upstream sign-ins: in the shared store, sealed", "key", keys.ID())
		return &oauth.Sealed{Blobs: st, Keys: keys}, func() { st.Close() }
	}
	dir := o.oauthDir(log)
	if dir == "" {
		return nil, close
	}
	return &oauth.Store{Dir: dir}, close
}

// authorizer returns the pool's wrapper of HTTP servers' round trippers:
// each server's sign-in, read from recs and refreshed here. nil when recs
// is.
func (o *Options) authorizer(recs oauth.Records, log *slog.Logger) func(*config.Server, http.RoundTripper) http.RoundTripper {
	if recs == nil {
		return nil
	}
	browser := o.OAuthBrowser
	return func(srv *config.Server, base http.RoundTripper) http.RoundTripper {
		client := &oauth.Client{HTTP: &http.Client{Transport: base}}
		return &oauth.Transport{
			Server: srv.Name, URL: srv.URL, Settings: oauth.SettingsOf(srv.OAuth), Store: recs, Client: client,
			Base: base, Browser: browser, Log: log.With("server", srv.Name),
		}
	}
}

// refresher keeps the live config's signed-in HTTP servers' tokens fresh
// (see oauth.Refresher).
func (c *core) refresher(recs oauth.Records) *oauth.Refresher {
	return &oauth.Refresher{Records: recs, Log: c.log, Targets: func() []oauth.Target {
		cfg := c.relay.Config()
		if cfg == nil {
			return nil
		}
		var out []oauth.Target
		for name, s := range cfg.Servers {
			if s.Transport != config.TransportStdio {
				out = append(out, oauth.Target{Server: name, URL: s.URL})
			}
		}
		return out
	}}
}

// oauthDir is the sign-in directory: OAuthDir, else the state
// directory's; "" when there is none.
func (o *Options) oauthDir(log *slog.Logger) string {
	if o.OAuthDir != "" {
		return o.OAuthDir
	}
	p, err := config.DefaultPaths(nil)
	if err != nil {
		log.Warn("no state directory: upstream sign-ins are off", "err", err)
		return ""
	}
	return p.OAuthDir()
}
