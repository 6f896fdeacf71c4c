package oauth

import (
	"context"
	"errors"
)

// Records is where sign-ins are kept: one 0600 file per server under the
// state directory ([Store], a single daemon's machine), or the shared
// store, sealed with a key from outside it ([Sealed], replicas). Every
// process using the same records sees one sign-in per server: a `mcpx
// login` through any of them signs in all.
//
// Load may answer from a cache that is at most a moment old (each
// implementation says how it notices a change); Update reads the current
// record afresh, under the server's lock, which every process sharing the
// records honours: of processes racing to refresh a token, one refreshes
// and the others find its new token. Records returned are not to be
// changed: copy one to make the next.
type Records interface {
	// Load returns the server's record, or ErrNoRecord.
	Load(ctx context.Context, server string) (*Record, error)
	// Save stores r as its server's record.
	Save(ctx context.Context, r *Record) error
	// Delete removes the server's record; none is no error.
	Delete(ctx context.Context, server string) error
	// Update calls fn with the server's current record (nil when none)
	// under the server's lock and stores what fn returns unless it is nil;
	// it returns the record in place afterwards (nil when none).
	Update(ctx context.Context, server string, fn func(cur *Record) (*Record, error)) (*Record, error)
}

// StateOf reads server's sign-in, for a server configured at url, as
// status shows it.
func StateOf(ctx context.Context, recs Records, server, url string) SignInState {
	rec, err := recs.Load(ctx, server)
	switch {
	case errors.Is(err, ErrNoRecord):
		return SignInState{State: NotSignedIn}
	case err != nil:
		return SignInState{State: Unreadable, Err: err}
	}
	st := SignInState{State: SignedIn, SignedIn: rec.SignedIn, Expiry: rec.Token.Expiry, Refreshable: rec.Token.RefreshToken != ""}
	switch {
	case rec.ServerURL != url:
		st.State = OldURL
	case rec.Refused != nil:
		st.State, st.Refreshable = Revoked, false
		st.Refused = rec.Refused.At
		st.Err = errors.New(rec.Refused.Reason)
	}
	return st
}

// Unavailable is the records of a gateway that cannot reach or open its
// sign-ins (the shared store down at start, no key, a wrong key): every
// use fails with Err, which says why, so that status and a call to a
// server that needs a sign-in both show it.
type Unavailable struct{ Err error }

var _ Records = Unavailable{}

// Load implements [Records].
func (u Unavailable) Load(context.Context, string) (*Record, error) { return nil, u.Err }

// Save implements [Records].
func (u Unavailable) Save(context.Context, *Record) error { return u.Err }

// Delete implements [Records].
func (u Unavailable) Delete(context.Context, string) error { return u.Err }

// Update implements [Records].
func (u Unavailable) Update(context.Context, string, func(*Record) (*Record, error)) (*Record, error) {
	return nil, u.Err
}
