package oauth

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A background refresh that keeps failing is reported (how many times,
// the last error, when it is tried next) until a refresh works, or a new
// sign-in replaces the token it failed on.
func TestRefresherFailing(t *testing.T) {
	run := func(t *testing.T, te *tokenEndpoint, recs Records) (*Refresher, func()) {
		r := &Refresher{Records: recs, HTTP: &http.Client{Transport: te},
			Targets: func() []Target { return []Target{{Server: "s", URL: "https://s/mcp"}} }}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = r.Run(ctx) })
		return r, func() { cancel(); wg.Wait() }
	}
	failing := func(r *Refresher) RefreshFailure {
		synctest.Wait()
		f, _ := r.Failing("s")
		return f
	}

	t.Run("until a refresh works", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			recs := &Store{Dir: t.TempDir()}
			signedIn(t, recs, 10*time.Minute) // due 5 min ahead: at 5:00
			te := &tokenEndpoint{lifetime: 3600, fail: func(n int) (int, string) {
				if n <= 2 {
					return http.StatusServiceUnavailable, "temporarily_unavailable"
				}
				return 0, ""
			}}
			r, stop := run(t, te, recs)
			defer stop()
			start := time.Now()
			if f := failing(r); f.Failures != 0 {
				t.Fatalf("before any refresh: %+v", f)
			}
			time.Sleep(5*time.Minute + time.Second)
			if f := failing(r); f.Failures != 1 || !strings.Contains(f.Err, "temporarily_unavailable") || f.Next.Sub(start) != 5*time.Minute+5*time.Second {
				t.Fatalf("after the first failure: %+v (next at +%v)", f, f.Next.Sub(start))
			}
			time.Sleep(5 * time.Second)
			if f := failing(r); f.Failures != 2 || f.Next.Sub(start) != 5*time.Minute+15*time.Second {
				t.Fatalf("after the second failure: %+v (next at +%v)", f, f.Next.Sub(start))
			}
			time.Sleep(10 * time.Second)
			if f, ok := r.Failing("s"); ok {
				t.Fatalf("after a refresh that worked: still failing %+v", f)
			}
		})
	})

	for _, expiry := range []time.Duration{time.Hour, 0} {
		name := "until a new sign-in"
		if expiry == 0 {
			name += " whose token has no expiry"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				recs := &Store{Dir: t.TempDir()}
				signedIn(t, recs, time.Minute) // due at once
				te := &tokenEndpoint{lifetime: 3600, fail: func(int) (int, string) {
					return http.StatusServiceUnavailable, "temporarily_unavailable"
				}}
				r, stop := run(t, te, recs)
				defer stop()
				if f := failing(r); f.Failures != 1 {
					t.Fatalf("after the first failure: %+v", f)
				}
				rec, err := recs.Load(t.Context(), "s")
				if err != nil {
					t.Fatal(err)
				}
				rec.Token = Token{AccessToken: "at-login", RefreshToken: "rt-login", Obtained: time.Now()}
				if expiry != 0 {
					rec.Token.Expiry = time.Now().Add(expiry)
				}
				if err := recs.Save(t.Context(), rec); err != nil {
					t.Fatal(err)
				}
				time.Sleep(DefaultPoll)
				if f, ok := r.Failing("s"); ok {
					t.Fatalf("after a new sign-in: still failing %+v", f)
				}
			})
		})
	}
}
