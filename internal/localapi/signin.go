package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/oauth"
	"mcpx/internal/principal"
)

// The per-person sign-in pages (oauth.Gateway) are reached by a person's
// browser, which carries no token: the face that serves them (SignInPages)
// decides who is asking by the sign-in's state, which the gateway bound to
// the principal it was made for, secret and single-use; the policy then
// decides principal.SignIn for that principal.

// SignInPages serves the routes a browser reaches (the per-person
// sign-in's start and callback), each request's principal decided by the
// sign-in's state; nil when there is no gateway for sign-ins.
func (h *Handler) SignInPages() http.Handler {
	if h.opts.SignIns == nil {
		return nil
	}
	return h.pages
}

// wrapPage is wrap for a browser's route: its principal is the one the
// state names, its refusals plain text.
func (h *Handler) wrapPage(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		err := h.decidePage(w, r, rt)
		if err == nil {
			return
		}
		status := http.StatusInternalServerError
		var pe *oauth.PageError
		var he *httpError
		switch {
		case errors.As(err, &pe):
			status = pe.Status
		case errors.As(err, &he):
			status = he.status
		}
		if status >= 500 {
			h.log.Warn("a sign-in page failed", "path", r.URL.Path, "err", err)
		}
		http.Error(w, err.Error(), status)
	})
}

func (h *Handler) decidePage(w http.ResponseWriter, r *http.Request, rt route) error {
	g := h.opts.SignIns
	if g == nil {
		return statusErr(http.StatusNotFound, errors.New("no sign-ins are served here"))
	}
	id, server, err := g.Bound(r.Context(), oauth.PageState(r))
	if err != nil {
		return err
	}
	who := principal.Bound(id)
	if err := h.relay.Policy(who).Decide(rt.op, principal.Target{Owner: id, Server: server}); err != nil {
		return refusal(err)
	}
	err = rt.page(w, r.WithContext(principal.NewContext(r.Context(), who)))
	h.recordSignIn(who, rt.method+" "+rt.path, server, err)
	return err
}

// serveRevokeSignIn revokes and forgets a principal's own sign-in to a
// per-person server: the caller's, or, for the operator, the one
// ?principal names.
func (h *Handler) serveRevokeSignIn(w http.ResponseWriter, r *http.Request) error {
	pol := h.policy(r)
	server := r.PathValue("server")
	owner := r.URL.Query().Get("principal")
	if owner == "" {
		owner = pol.Who().ID()
	}
	if err := pol.Decide(principal.RevokeSignIn, principal.Target{Owner: owner, Server: server}); err != nil {
		return refusal(err)
	}
	cfg := h.relay.Config()
	if cfg == nil || cfg.Servers[server] == nil {
		return statusErr(http.StatusNotFound, fmt.Errorf("no server %q is configured", server))
	}
	if !cfg.Servers[server].PerPerson() {
		return statusErr(http.StatusBadRequest, fmt.Errorf("server %q has one shared sign-in, not one per person (oauth.accounts): mcpx logout %s on the gateway's machine ends it", server, server))
	}
	recs := h.opts.OAuth
	if recs == nil {
		return statusErr(http.StatusNotFound, errors.New("no sign-ins are kept here"))
	}
	key := oauth.PersonKey(server, owner)
	rec, err := recs.Load(r.Context(), key)
	if errors.Is(err, oauth.ErrNoRecord) {
		return statusErr(http.StatusNotFound, fmt.Errorf("no sign-in of this principal to %q", server))
	}
	if err != nil {
		return err
	}
	out := apitype.SignOut{Server: server, Principal: owner}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	client := &oauth.Client{HTTP: &http.Client{Timeout: 10 * time.Second}}
	revoked, rerr := client.Revoke(ctx, rec)
	out.Revoked = revoked && rerr == nil
	if rerr != nil {
		out.RevokeError = rerr.Error()
	}
	if err := recs.Delete(r.Context(), key); err != nil {
		return err
	}
	h.log.Info("a person's sign-in was revoked", "server", server, "principal", owner, "by", pol.Who().ID(), "revoked", out.Revoked)
	h.recordSignOut(pol.Who(), server, owner, out.Revoked)
	return writeJSON(w, out)
}

// signInStart is the sign-in link a person's host opens (oauth.Gateway.Start).
func (h *Handler) signInStart(w http.ResponseWriter, r *http.Request) error {
	return h.opts.SignIns.Start(w, r)
}

// signInCallback is where the authorization server sends the browser
// back (oauth.Gateway.Callback).
func (h *Handler) signInCallback(w http.ResponseWriter, r *http.Request) error {
	return h.opts.SignIns.Callback(w, r)
}
