package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

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
//
// On a per-person server, person's session carries person's own sign-in,
// and never signs in by itself: a person signs in through the gateway
// (oauth.Gateway), in their own browser.
func (o *Options) authorizer(recs oauth.Records, log *slog.Logger) func(*config.Server, string, http.RoundTripper) http.RoundTripper {
	if recs == nil {
		return nil
	}
	return func(srv *config.Server, person string, base http.RoundTripper) http.RoundTripper {
		client := &oauth.Client{HTTP: &http.Client{Transport: base}}
		browser, l := o.OAuthBrowser, log.With("server", srv.Name)
		if person != "" {
			browser, l = nil, l.With("principal", person)
		}
		return &oauth.Transport{
			Server: srv.Name, Principal: person, URL: srv.URL, Settings: oauth.SettingsOf(srv.OAuth), Store: recs, Client: client,
			Base: base, Browser: browser, Log: l,
		}
	}
}

// gateway returns the per-person sign-ins of recs, whose pending
// sign-ins are kept where recs are (sealed in the shared store, so that
// any replica takes the browser's next step) or in memory; the redirect
// comes back to the config's mcpx.http.publicUrl, else the listener's
// own address.
func (c *core) gateway(recs oauth.Records, httpAddr string) *oauth.Gateway {
	g := &oauth.Gateway{Records: recs, Pending: &oauth.MemBlobs{TTL: time.Hour}, Log: c.log, BaseURL: func() string {
		if cfg := c.relay.Config(); cfg != nil && cfg.HTTP.PublicURL != "" {
			return cfg.HTTP.PublicURL
		}
		if httpAddr == "" {
			return ""
		}
		return "http://" + httpAddr
	}}
	if s, ok := recs.(*oauth.Sealed); ok {
		g.Pending, g.Keys = s.Blobs, s.Keys
	}
	return g
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
				out = append(out, oauth.Target{Server: name, URL: s.URL, PerPerson: s.PerPerson()})
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
