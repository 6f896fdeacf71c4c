package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/oauth"
)

// printSignIns shows each http server's sign-in state, read from the
// state directory (mcpx login writes it; the daemon refreshes it).
func printSignIns(w io.Writer, cfg *config.Config, paths config.Paths, now time.Time) {
	var names []string
	for name, s := range cfg.Servers {
		if s.Transport != config.TransportStdio {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	store := &oauth.Store{Dir: paths.OAuthDir()}
	fmt.Fprintln(w, "\nSIGN-IN")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, name := range names {
		rec, err := store.Load(name)
		switch {
		case errors.Is(err, oauth.ErrNoRecord):
			fmt.Fprintf(tw, "%s\tnot signed in\t(mcpx login %s, if it asks for one)\n", name, name)
		case err != nil:
			fmt.Fprintf(tw, "%s\tunreadable\t%v\n", name, err)
		case rec.ServerURL != cfg.Servers[name].URL:
			fmt.Fprintf(tw, "%s\tsigned in to its old URL\tmcpx login %s\n", name, name)
		default:
			fmt.Fprintf(tw, "%s\tsigned in %s ago\t%s\n", name, ago(now, rec.SignedIn), expiry(rec, now))
		}
	}
	tw.Flush()
}
