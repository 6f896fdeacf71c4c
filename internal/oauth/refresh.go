package oauth

import (
	"context"
	"errors"
	"time"
)

// refusedReason is what a sign-in whose refresh token was refused says.
const refusedReason = "the authorization server refused the refresh token (revoked, or expired): sign in again"

// refreshRecord refreshes server's token under the server's lock (see
// [Records]), if need says the current record still needs it: a process
// that lost the race finds the winner's token and returns it. A refresh
// token the authorization server refuses (invalid_grant) ends the
// sign-in: the record is kept, marked refused, for status to show, and
// the error is a *SignInError. Any other failure changes nothing: the
// sign-in stays for the next try. did reports that this call refreshed.
//
// principal is "" for the server's shared record, else the ID of the
// principal whose per-person record it is.
func refreshRecord(ctx context.Context, recs Records, c *Client, server, principal, url string, need func(cur *Record) bool) (rec *Record, did bool, err error) {
	var refused bool
	rec, err = recs.Update(ctx, PersonKey(server, principal), func(cur *Record) (*Record, error) {
		switch {
		case cur == nil || cur.ServerURL != url:
			return nil, &SignInError{Server: server, Principal: principal, Reason: "not signed in"}
		case cur.Refused != nil:
			return nil, &SignInError{Server: server, Principal: principal, Reason: cur.Refused.Reason}
		case !need(cur):
			return nil, nil // done by another request or process meanwhile
		case cur.Token.RefreshToken == "":
			return nil, &SignInError{Server: server, Principal: principal, Reason: "the token expired and the server gave no refresh token"}
		}
		next := *cur
		if err := c.Refresh(ctx, &next); err != nil {
			var te *TokenError
			if errors.As(err, &te) && te.Code == "invalid_grant" {
				refused = true
				next = *cur
				next.Refused = &Refusal{At: time.Now(), Reason: refusedReason}
				return &next, nil
			}
			return nil, err
		}
		did = true
		return &next, nil
	})
	if err != nil {
		return nil, false, err
	}
	if refused {
		return nil, false, &SignInError{Server: server, Principal: principal, Reason: refusedReason}
	}
	return rec, did, nil
}
