package oauth

import (
	"errors"
	"time"
)

// States of a server's sign-in, as status shows them.
const (
	SignedIn    = "signed_in"
	NotSignedIn = "not_signed_in"
	OldURL      = "old_url" // signed in to a URL the config no longer names
	Unreadable  = "unreadable"
)

// SignInState is what status shows of one server's sign-in; never a token.
type SignInState struct {
	State    string
	SignedIn time.Time
	// Expiry is the access token's; zero when the server gave none.
	Expiry time.Time
	// Refreshable: a refresh token is kept, so an expired access token
	// is renewed on the next request without a new sign-in.
	Refreshable bool
	Err         error // why it is Unreadable
}

// State reads server's sign-in, for a server configured at url.
func (s *Store) State(server, url string) SignInState {
	rec, err := s.Load(server)
	switch {
	case errors.Is(err, ErrNoRecord):
		return SignInState{State: NotSignedIn}
	case err != nil:
		return SignInState{State: Unreadable, Err: err}
	}
	st := SignInState{State: SignedIn, SignedIn: rec.SignedIn, Expiry: rec.Token.Expiry, Refreshable: rec.Token.RefreshToken != ""}
	if rec.ServerURL != url {
		st.State = OldURL
	}
	return st
}
