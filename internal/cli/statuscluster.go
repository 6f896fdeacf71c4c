package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
)

// printCluster prints the replicas sharing the store: each one's owner,
// address, machine, last heartbeat and jobs.
func printCluster(w io.Writer, c *apitype.Cluster, now time.Time) {
	if c == nil {
		return
	}
	live := 0
	for _, r := range c.Replicas {
		if r.Live {
			live++
		}
	}
	fmt.Fprintf(w, "\nCLUSTER  %d replica(s) share the store, %d live (heartbeats every %s, read %s ago)\n",
		len(c.Replicas), live, time.Duration(c.LeaseTermMs/3)*time.Millisecond, ago(now, c.Read))
	if c.Error != "" {
		fmt.Fprintf(w, "  reading the store failed: %s\n", c.Error)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  REPLICA\tADDRESS\tHOST\tPID\tVERSION\tHEARTBEAT\tJOBS\tLEASE")
	for _, r := range c.Replicas {
		owner := r.Owner
		if owner == c.Self {
			owner += " (this)"
		}
		addr := r.Address
		if addr == "" {
			addr = "-"
		}
		beat := ago(now, r.Seen) + " ago"
		if !r.Live {
			beat += ", lapsed"
		}
		lease := "-"
		if !r.LeaseUntil.IsZero() {
			if r.LeaseUntil.After(now) {
				lease = "for " + ago(r.LeaseUntil, now)
			} else {
				lease = "ended " + ago(now, r.LeaseUntil) + " ago"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\n", owner, addr, r.Host, r.PID, r.Version, beat, r.Jobs, lease)
	}
	tw.Flush()
}

// printJobLeases says when the daemon has lost its job leases, or the
// job store refuses their renewals: nothing when all is well.
func printJobLeases(w io.Writer, l *apitype.JobLeases, now time.Time) {
	if l == nil {
		return
	}
	switch {
	case l.FileLost:
		fmt.Fprintf(w, "\nJOB STORE FILE LOST: %s\n  running jobs keep their ends in memory until mcpx stops; new jobs are refused\n", l.Error)
	case l.Lost:
		since := "since it started"
		if !l.Renewed.IsZero() {
			since = "for " + ago(now, l.Renewed)
		}
		if l.Exclusive {
			fmt.Fprintf(w, "\nJOB STORE NOT ANSWERING: it has not answered a renewal of the job leases %s; no other mcpx uses this store, so its jobs run on here, and their progress and ends are written once it answers\n", since)
		} else {
			fmt.Fprintf(w, "\nJOB LEASES LOST: the job store has not answered a renewal %s; another replica may take this one's jobs\n", since)
		}
		if l.Error != "" {
			fmt.Fprintf(w, "  last error: %s\n", l.Error)
		}
	case l.Error != "":
		fmt.Fprintf(w, "\njob leases: the last renewal failed (they hold until a lease term passes without one): %s\n", l.Error)
	}
	if skew := time.Duration(l.SkewMs) * time.Millisecond; skew.Abs() > time.Second {
		fmt.Fprintf(w, "clock: %v ahead of the job store's (leases and the store's times keep to the store's; the times this mcpx shows of its own are off as much)\n", skew)
	}
}

// readCluster reads the replicas from the shared store cfg names, for a
// machine whose replica runs no daemon (mcpx serve --http).
func readCluster(ctx context.Context, env *Env, cfg *config.Config) (*apitype.Cluster, error) {
	if env.ReadCluster == nil {
		return nil, errNoStoreAccess
	}
	return env.ReadCluster(ctx, cfg)
}
