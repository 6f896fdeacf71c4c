package hostserver

import (
	"net/http"

	"mcpx/internal/hosthttp"
)

// A person's access token, for token exchange. A per-person server
// configured with oauth.tokenExchange gets a person's upstream token by
// exchanging the access token the person signed in to mcpx with
// (bridge/exchange.go), so the token that opened the request travels with
// the person's calls as relay.Call.Subject. It is kept on the host
// session (a 2026-07-28 request's: as long as the request; a legacy
// session's: the latest request's token, until the next request replaces
// it or the session ends) and in the Calls made from it (as long as each
// call runs, a job's included). It is never logged nor stored. Only a
// person's token is kept: mcpx's own tokens are no identity provider's.

// keepSubject keeps the access token of r when the session's principal
// is a person (the face verified that token to decide who they are).
func (hs *hostSession) keepSubject(r *http.Request) {
	if !hs.who.IsPerson() {
		return
	}
	if tok := hosthttp.Bearer(r.Header.Get("Authorization")); tok != "" {
		hs.subject.Store(&tok)
	}
}

// subjectToken is the person's latest access token, "" for anyone else.
func (hs *hostSession) subjectToken() string {
	if p := hs.subject.Load(); p != nil {
		return *p
	}
	return ""
}
