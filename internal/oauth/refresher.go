package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Target is a server whose sign-in a [Refresher] keeps fresh.
type Target struct {
	Server string
	URL    string // the configured URL: a record made for another is left alone
	// PerPerson: the server has a record per principal, each kept fresh
	// (when the records are a [Lister]) beside its shared one.
	PerPerson bool
	// Principal is the principal of one per-person record ("": the
	// shared one); the refresher sets it as it expands PerPerson.
	Principal string
}

// key is where tg's record is kept.
func (tg Target) key() string { return PersonKey(tg.Server, tg.Principal) }

// Refresher defaults.
const (
	// BackgroundAhead is how long before its expiry a token is refreshed
	// in the background (a quarter of its lifetime when that is shorter):
	// before requests would refresh it themselves (refreshAhead).
	BackgroundAhead = 5 * time.Minute
	// DefaultPoll is how often the records are read for sign-ins made
	// or refreshed elsewhere.
	DefaultPoll = 15 * time.Second
	// firstRetry and maxRetry bound the backoff after a failed refresh.
	firstRetry = 5 * time.Second
	maxRetry   = 5 * time.Minute
)

// Refresher refreshes the signed-in servers' access tokens before they
// expire, while the gateway runs, so that no request waits for a refresh
// and a refresh token is used before the authorization server forgets it.
// A failed refresh is tried again with a backoff (5 s, doubling, at most
// 5 min); a refused refresh token ends the sign-in (the record says so,
// for status). Gateways sharing the records may each run one: the
// records' lock makes one refresh and the others find its token.
//
// Run is the service: it returns nil when ctx ends, having waited for
// its refreshes.
type Refresher struct {
	Records Records
	// Targets returns the servers to keep fresh (the live config's).
	Targets func() []Target
	// HTTP sends the token requests; nil: a client with a 30 s timeout.
	HTTP  *http.Client
	Ahead time.Duration // 0: BackgroundAhead
	Poll  time.Duration // 0: DefaultPoll
	Log   *slog.Logger

	mu     sync.Mutex
	failed map[string]retry
}

// retry is a server whose last background refresh failed.
type retry struct {
	token    string // the access token it failed to refresh
	failures int
	at       time.Time
	err      string
}

// RefreshFailure is a server whose background refresh keeps failing
// (the authorization server down or refusing for a while): shown in
// status before the token expires and requests fail.
type RefreshFailure struct {
	Failures int       // failed refreshes in a row
	Err      string    // the last one's error
	Next     time.Time // when it is tried again
}

// Failing reports whether server's background refresh is failing, and
// how; a refresh that works, or a new sign-in, clears it.
func (r *Refresher) Failing(server string) (RefreshFailure, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.failed[server]
	if !ok {
		return RefreshFailure{}, false
	}
	return RefreshFailure{Failures: f.failures, Err: f.err, Next: f.at}, true
}

// Run refreshes until ctx ends.
func (r *Refresher) Run(ctx context.Context) error {
	poll := r.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		next := time.Now().Add(poll)
		for _, tg := range r.expand(ctx, r.Targets()) {
			if due := r.visit(ctx, tg); !due.IsZero() && due.Before(next) {
				next = due
			}
		}
		timer.Reset(max(time.Until(next), 0))
	}
}

// visit refreshes tg's token if it is due, and returns when it is due
// next (zero: nothing to do until the records change).
func (r *Refresher) visit(ctx context.Context, tg Target) time.Time {
	rec, err := r.Records.Load(ctx, tg.key())
	if err != nil && !errors.Is(err, ErrNoRecord) {
		return time.Time{} // unreadable now: what failed before still stands
	}
	if err != nil || rec.ServerURL != tg.URL || rec.Refused != nil || rec.Token.RefreshToken == "" {
		r.settle(tg.key(), nil) // signed out, in again elsewhere, or ended: nothing to retry
		return time.Time{}
	}
	ahead := r.Ahead
	if ahead <= 0 {
		ahead = BackgroundAhead
	}
	r.mu.Lock()
	f, retrying := r.failed[tg.key()]
	r.mu.Unlock()
	if retrying && f.token != rec.Token.AccessToken {
		r.settle(tg.key(), nil) // a new token (a login, another gateway's refresh)
		retrying = false
	}
	due := rec.Token.due(ahead)
	if due.IsZero() {
		return due
	}
	if retrying && f.at.After(due) {
		due = f.at
	}
	if time.Now().Before(due) {
		return due
	}
	next, did, err := refreshRecord(ctx, r.Records, r.client(), tg.Server, tg.Principal, tg.URL, func(cur *Record) bool {
		d := cur.Token.due(ahead)
		return !d.IsZero() && !time.Now().Before(d)
	})
	var signIn *SignInError
	switch {
	case err == nil:
		r.settle(tg.key(), nil)
		if did {
			r.log().Info("refreshed the server's access token ahead of its expiry", "server", tg.Server, "principal", tg.Principal, "expiry", next.Token.Expiry)
		}
		return next.Token.due(ahead)
	case errors.As(err, &signIn):
		r.settle(tg.key(), nil)
		r.log().Warn("the server's sign-in has ended", "server", tg.Server, "principal", tg.Principal, "reason", signIn.Reason)
		return time.Time{}
	case ctx.Err() != nil:
		return time.Time{}
	}
	f = r.settle(tg.key(), &retry{token: rec.Token.AccessToken, err: err.Error()})
	r.log().Warn("refreshing the server's access token failed; trying again", "server", tg.Server, "principal", tg.Principal, "err", err, "in", time.Until(f.at).Round(time.Second))
	return f.at
}

// expand adds, after each per-person target, one target per principal
// signed in to it, as the records list them.
func (r *Refresher) expand(ctx context.Context, tgs []Target) []Target {
	lister, ok := r.Records.(Lister)
	if !ok {
		return tgs
	}
	out := tgs
	for _, tg := range tgs {
		if !tg.PerPerson {
			continue
		}
		keys, err := lister.PersonKeys(ctx, tg.Server)
		if err != nil {
			r.log().Warn("cannot list the per-person sign-ins to refresh", "server", tg.Server, "err", err)
			continue
		}
		for _, k := range keys {
			rec, err := r.Records.Load(ctx, k)
			if err != nil || rec.Principal == "" || PersonKey(tg.Server, rec.Principal) != k {
				continue
			}
			out = append(out, Target{Server: tg.Server, URL: tg.URL, Principal: rec.Principal})
		}
	}
	return out
}

// settle records a server's refresh outcome: nil forgets a failure, else
// the failure counts and is tried again after the backoff.
func (r *Refresher) settle(server string, fail *retry) retry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fail == nil {
		delete(r.failed, server)
		return retry{}
	}
	if r.failed == nil {
		r.failed = map[string]retry{}
	}
	if prev, ok := r.failed[server]; ok && prev.token == fail.token {
		fail.failures = prev.failures
	}
	fail.failures++
	wait := firstRetry << min(fail.failures-1, 10)
	fail.at = time.Now().Add(min(wait, maxRetry))
	r.failed[server] = *fail
	return *fail
}

func (r *Refresher) client() *Client {
	h := r.HTTP
	if h == nil {
		h = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{HTTP: h}
}

func (r *Refresher) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}
