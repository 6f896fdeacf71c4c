package oauth

import "time"

// States of a server's sign-in, as status shows them.
const (
	SignedIn    = "signed_in"
	NotSignedIn = "not_signed_in"
	OldURL      = "old_url" // signed in to a URL the config no longer names
	Unreadable  = "unreadable"
	// Revoked: the authorization server refused the refresh token
	// (revoked, or expired): only a new sign-in helps.
	Revoked = "revoked"
)

// SignInState is what status shows of one server's sign-in; never a token.
type SignInState struct {
	State    string
	SignedIn time.Time
	// Expiry is the access token's; zero when the server gave none.
	Expiry time.Time
	// Refreshable: a refresh token is kept, so an expired access token
	// is renewed without a new sign-in.
	Refreshable bool
	// Refused is when the refresh token was refused (Revoked).
	Refused time.Time
	Err     error // why it is Unreadable or Revoked
}
