package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/oauth"
)

// signInRecords opens where cfg keeps the upstream sign-ins, as the
// daemon does: with a shared store (mcpx.store), the store, each sealed
// with the key mcpx.oauth names; else the files of the state directory.
// Login and logout write there themselves: they run where the user's
// browser is, and need no daemon; every gateway using the same place sees
// the sign-in at once. close releases the store.
func signInRecords(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths) (recs oauth.Records, close func(), err error) {
	if cfg.Store == "" {
		return &oauth.Store{Dir: paths.OAuthDir()}, func() {}, nil
	}
	if env.OpenSignIns == nil {
		return nil, nil, errNoStoreAccess
	}
	return env.OpenSignIns(ctx, cfg, env.getenv)
}

// errNoStoreAccess: the Env was built without the daemon's ways into the
// shared store (a test's).
var errNoStoreAccess = errors.New("this mcpx cannot open the shared store: its CLI was built without the daemon's access to it")

// localSignIns reads each http server's sign-in without a daemon.
func localSignIns(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths) []apitype.SignIn {
	var out []apitype.SignIn
	recs, closeRecs, err := signInRecords(ctx, env, cfg, paths)
	if err == nil {
		defer closeRecs()
	}
	for name, s := range cfg.Servers {
		if s.Transport == config.TransportStdio {
			continue
		}
		si := apitype.SignIn{Server: name, State: oauth.Unreadable}
		if err != nil {
			si.Error = err.Error()
		} else {
			st := oauth.StateOf(ctx, recs, name, s.URL)
			si = apitype.SignIn{Server: name, State: st.State, SignedIn: st.SignedIn, Expiry: st.Expiry, Refreshable: st.Refreshable, Refused: st.Refused}
			if st.Err != nil {
				si.Error = st.Err.Error()
			}
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b apitype.SignIn) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// printSignIns shows each http server's sign-in state.
func printSignIns(w io.Writer, signIns []apitype.SignIn, now time.Time) {
	if len(signIns) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSIGN-IN")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range signIns {
		switch s.State {
		case oauth.NotSignedIn:
			fmt.Fprintf(tw, "%s\tnot signed in\t(mcpx login %s, if it asks for one)\n", s.Server, s.Server)
		case oauth.Unreadable:
			fmt.Fprintf(tw, "%s\tunreadable\t%s\n", s.Server, s.Error)
		case oauth.OldURL:
			fmt.Fprintf(tw, "%s\tsigned in to its old URL\tmcpx login %s\n", s.Server, s.Server)
		case oauth.Revoked:
			fmt.Fprintf(tw, "%s\tsign-in revoked %s ago\tthe refresh token was refused: mcpx login %s\n", s.Server, ago(now, s.Refused), s.Server)
		default:
			fmt.Fprintf(tw, "%s\tsigned in %s ago\t%s%s\n", s.Server, ago(now, s.SignedIn), expiry(s.Expiry, s.Refreshable, now), refreshFailing(s.RefreshFailing, now))
		}
	}
	tw.Flush()
}

// refreshFailing says how a failing background refresh fails; "" when
// it does not.
func refreshFailing(f *apitype.RefreshFailing, now time.Time) string {
	if f == nil {
		return ""
	}
	next := "now"
	if f.Next.After(now) {
		next = "in " + ago(f.Next, now)
	}
	return fmt.Sprintf("; refreshing it failed %d times (%s), next try %s", f.Failures, f.Error, next)
}

// statusSignIns prints the sign-ins without a daemon.
func statusSignIns(env *Env, cfg *config.Config, paths config.Paths) {
	printSignIns(env.Stdout, localSignIns(context.Background(), env, cfg, paths), time.Now())
}
