package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/localclient"
)

// watchEvery is how often status --watch asks the daemon.
const watchEvery = 250 * time.Millisecond

// watchStatus redraws the status on a terminal, or prints a line per
// change when its output is not one, until ctx ends (not an error) or
// the daemon goes (exit 3).
func watchStatus(ctx context.Context, env *Env, c *localclient.Client) error {
	tty := false
	if f, ok := env.Stdout.(*os.File); ok {
		_, tty = terminalWidth(f)
	}
	var prev *apitype.Status
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		st, err := c.Status(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, localclient.ErrNoDaemon):
			fmt.Fprintf(env.Stdout, "%s daemon stopped\n", clock(time.Now()))
			return &exitError{ExitTransport, errSilent}
		case err != nil:
			return err
		}
		if tty {
			fmt.Fprint(env.Stdout, "\x1b[H\x1b[2J") // home, clear
			printStatus(env, st, time.Now())
		} else {
			printChanges(env.Stdout, prev, st, time.Now())
		}
		prev = st
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }

// printChanges prints a line for each difference between two statuses:
// the daemon, hosts, each upstream's state, each call's start, progress
// and end. With no previous status, everything is new.
func printChanges(w io.Writer, prev, st *apitype.Status, now time.Time) {
	at := clock(now)
	if prev == nil {
		fmt.Fprintf(w, "%s daemon pid %d, version %s\n", at, st.PID, st.Version)
		prev = &apitype.Status{Hosts: -1, HTTPSessions: -1}
	}
	if st.Hosts != prev.Hosts || st.HTTPSessions != prev.HTTPSessions {
		fmt.Fprintf(w, "%s hosts %d connected, %d HTTP sessions\n", at, st.Hosts, st.HTTPSessions)
	}
	was := map[string]apitype.Upstream{}
	for _, u := range prev.Upstreams {
		was[u.Name] = u
	}
	for _, u := range st.Upstreams {
		p, ok := was[u.Name]
		if ok && p.State == u.State && p.PID == u.PID && p.Starts == u.Starts && p.LastError == u.LastError {
			continue
		}
		line := fmt.Sprintf("%s server %s %s", at, u.Name, u.State)
		if u.PID > 0 {
			line += " pid " + strconv.Itoa(u.PID)
		}
		line += fmt.Sprintf(" (starts %d)", u.Starts)
		if u.LastError != "" {
			line += ": " + u.LastError
		}
		fmt.Fprintln(w, line)
	}
	calls := map[uint64]apitype.InFlightCall{}
	for _, c := range prev.Calls {
		calls[c.ID] = c
	}
	for _, c := range st.Calls {
		what := c.Method
		if c.Tool != "" {
			what = c.Server + "." + c.Tool
		}
		p, ok := calls[c.ID]
		delete(calls, c.ID)
		if !ok {
			fmt.Fprintf(w, "%s call #%d %s started from %s\n", at, c.ID, what, c.Host)
		}
		if c.Progress != nil && (!ok || p.Progress == nil || !sameProgress(p.Progress, c.Progress)) {
			fmt.Fprintf(w, "%s call #%d progress %s\n", at, c.ID, progressText(c.Progress))
		}
	}
	for _, c := range prev.Calls {
		if _, gone := calls[c.ID]; gone {
			fmt.Fprintf(w, "%s call #%d ended\n", at, c.ID)
		}
	}
}

func sameProgress(a, b *apitype.Progress) bool {
	return a.Progress == b.Progress && a.Message == b.Message && (a.Total == nil) == (b.Total == nil) && (a.Total == nil || *a.Total == *b.Total)
}

func progressText(p *apitype.Progress) string {
	s := progressNumber(p.Progress)
	if p.Total != nil {
		s += "/" + progressNumber(*p.Total)
	}
	if p.Message != "" {
		s += "  " + progressSanitize(p.Message)
	}
	return s
}
