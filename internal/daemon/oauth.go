package daemon

import (
	"log/slog"
	"net/http"

	"mcpx/internal/config"
	"mcpx/internal/oauth"
)

// authorizer returns the pool's wrapper of HTTP servers' round trippers:
// each server's sign-in, read from the sign-in directory (which `mcpx
// login` writes: every host of the machine shares it) and refreshed here.
// nil when there is no directory for them.
func (o *Options) authorizer(log *slog.Logger) func(*config.Server, http.RoundTripper) http.RoundTripper {
	dir := o.oauthDir(log)
	if dir == "" {
		return nil
	}
	store := &oauth.Store{Dir: dir}
	browser := o.OAuthBrowser
	return func(srv *config.Server, base http.RoundTripper) http.RoundTripper {
		client := &oauth.Client{HTTP: &http.Client{Transport: base}}
		return &oauth.Transport{
			Server: srv.Name, URL: srv.URL, Settings: oauth.SettingsOf(srv.OAuth), Store: store, Client: client,
			Base: base, Browser: browser, Log: log.With("server", srv.Name),
		}
	}
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
