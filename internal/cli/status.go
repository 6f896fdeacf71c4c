package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
	"mcpx/internal/localclient"
)

func cmdStatus() *command {
	var configPath string
	var asJSON, watch bool
	return &command{
		name:   "status",
		noArgs: true,
		short:  "show the daemon, each upstream server and the calls in flight",
		long: `
Status shows the daemon serving this config (it does not start one): its
socket, its MCP endpoint on TCP and the file of the token it requires, the
hosts connected, each with the tool-call timer mcpx assumes of it (how
long, whether progress resets it, and whether that is built in, from the
config's mcpx.hosts or the default for a host mcpx does not know), each
upstream server (state, pid, protocol revision, calls in flight), every
call in flight with its latest progress, and each HTTP server's sign-in
(mcpx login) with its token's expiry. A server whose entry in the config
has a mistake of its own is "unconfigured", with the mistake; a reload of a
config file that did not load is shown, with why, until one succeeds.

The PID is the server's own. Each stdio server runs under a supervisor of
its own, an "mcpx shim" process (it stops everything the server starts when
the server ends): about 8 to 12 MB resident each, most of it the mcpx
executable's pages, shared with the daemon and the other shims (about 3 MB
are its own).

With no daemon running, status lists the config's servers (none runs) and
exits 3.

When the config names a shared store (mcpx.store), status shows the cluster
too: every replica sharing the store, with its address, machine, last
heartbeat (each writes one every third of mcpx.jobs.leaseTerm; one not seen
for a lease term is "lapsed": it died or lost the store) and the jobs it
runs. With no daemon running here (a replica run by "mcpx serve --http"),
status reads the cluster from the store itself, and still exits 3.

With --watch it keeps watching until interrupted: on a terminal it redraws
the status four times a second; otherwise it prints a timestamped line per
change (a server's state, hosts connected, a call started, its progress, its
end), and ends with exit status 3 when the daemon stops.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&asJSON, "json", false, "print JSON")
			fs.BoolVar(&watch, "watch", false, "keep watching: redraw on a terminal, a line per change otherwise")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if watch && asJSON {
				return usagef("--watch and --json do not go together")
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return brokenConfigStatus(ctx, env, paths, err, asJSON || watch)
			}
			c, files := client(env, cfg, paths)
			st, err := c.Status(ctx)
			if errors.Is(err, localclient.ErrNoDaemon) {
				return noDaemonStatus(ctx, env, cfg, paths, files.Socket, asJSON)
			}
			if err != nil {
				return err
			}
			if watch {
				return watchStatus(ctx, env, c)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printStatus(env, st, time.Now())
			printSignIns(env.Stdout, st.SignIns, time.Now())
			return nil
		},
	}
}

func printStatus(env *Env, st *apitype.Status, now time.Time) {
	w := env.Stdout
	cfg := st.Config
	if cfg == "" {
		cfg = "built-in default (the demo server)"
	}
	fmt.Fprintf(w, "daemon   pid %d, version %s, up %s\n", st.PID, st.Version, ago(now, st.Started))
	fmt.Fprintf(w, "socket   %s (MCP over HTTP at %s too)\n", st.Socket, apitype.PathMCP)
	if st.HTTP != "" {
		fmt.Fprintf(w, "http     %s (bearer token in %s)\n", st.HTTP, st.TokenFile)
	} else {
		fmt.Fprintln(w, "http     no TCP listener (set mcpx.http.listen to serve HTTP hosts)")
	}
	fmt.Fprintf(w, "config   %s\n", cfg)
	if f := st.ReloadFailure; f != nil {
		fmt.Fprintf(w, "reload   failed %s ago, the config before it runs: %s\n", ago(now, f.At), f.Error)
	}
	fmt.Fprintf(w, "hosts    %d connected, %d HTTP sessions\n", st.Hosts, st.HTTPSessions)
	printHosts(w, st.Connected)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPID\tPROTOCOL\tIN FLIGHT\tSTARTS\tSINCE")
	for _, u := range st.Upstreams {
		pid, since := "-", "-"
		if u.PID > 0 {
			pid = strconv.Itoa(u.PID)
		}
		if !u.Since.IsZero() {
			since = ago(now, u.Since) + " ago"
		}
		proto := u.Protocol
		if proto == "" {
			proto = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", u.Name, u.State, pid, proto, u.InFlight, u.Starts, since)
	}
	tw.Flush()
	for _, u := range st.Upstreams {
		if u.PerHost {
			fmt.Fprintf(w, "  %s: %d host session(s) beside the shared one (perHost)\n", u.Name, u.HostSessions)
		}
		if u.Queued > 0 {
			fmt.Fprintf(w, "  %s: %d more call(s) queued for a call slot (maxConcurrentCalls)\n", u.Name, u.Queued)
		}
		switch {
		case u.State == stateUnconfigured:
			fmt.Fprintf(w, "  %s: not configured: %s\n", u.Name, u.LastError)
		case u.LastError != "":
			fmt.Fprintf(w, "  %s: last error: %s\n", u.Name, u.LastError)
		}
		if u.Failures > 0 || u.Crashes > 0 {
			next := "on next use"
			if u.Eager {
				next = "at once"
			}
			if !u.RetryAt.IsZero() {
				next = "not before " + ago(u.RetryAt, now) + " from now"
			}
			fmt.Fprintf(w, "  %s: %d failed start(s), %d early crash(es) in a row; restart %s\n", u.Name, u.Failures, u.Crashes, next)
		}
	}
	for _, c := range st.ToolNameCollisions {
		fmt.Fprintf(w, "  collision: %s\n", c)
	}
	printStatusJobs(env, st.Jobs, now)
	printJobLeases(w, st.JobLeases, now)
	printCluster(w, st.Cluster, now)
	printMemory(w, st.Memory)
	if len(st.Calls) == 0 {
		fmt.Fprintln(w, "\nno calls in flight")
		return
	}
	fmt.Fprintln(w, "\nCALLS IN FLIGHT")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range st.Calls {
		what := c.Method
		if c.Tool != "" {
			what = c.Server + "." + c.Tool
		}
		prog := "no progress yet"
		if p := c.Progress; p != nil {
			prog = progressNumber(p.Progress)
			if p.Total != nil {
				prog += "/" + progressNumber(*p.Total)
			}
			if p.Message != "" {
				prog += "  " + progressSanitize(p.Message)
			}
		}
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\tfrom %s\n", c.ID, what, ago(now, c.Started), prog, c.Host)
	}
	tw.Flush()
}

// brokenConfigStatus is status for a config file that does not load: a
// daemon serving it runs what the file said before (its reload failed),
// and is shown with the error; else the error alone.
func brokenConfigStatus(ctx context.Context, env *Env, paths config.Paths, err error, quiet bool) error {
	var ce *config.Error
	if quiet || !errors.As(err, &ce) || ce.File == "" || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	c := &localclient.Client{Socket: paths.Daemon(ce.File, env.Build).Socket, Version: env.Version}
	st, serr := c.Status(ctx)
	if serr != nil {
		return err
	}
	printStatus(env, st, time.Now())
	return err
}

// stateUnconfigured is the state status shows for a server whose config
// entry has a mistake of its own (the daemon's localapi.StateUnconfigured).
const stateUnconfigured = "unconfigured"

// printConfigServers lists the servers of cfg as a daemon would run them,
// for status with no daemon: none runs, a disabled one would not, an
// unconfigured one cannot.
func printConfigServers(w io.Writer, cfg *config.Config) {
	names := cfg.Names()
	for name := range cfg.Unconfigured {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		fmt.Fprintln(w, "\nno servers in the config")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTRANSPORT")
	for _, name := range names {
		s, ok := cfg.Servers[name]
		switch {
		case !ok:
			fmt.Fprintf(tw, "%s\t%s\t-\n", name, stateUnconfigured)
		case s.Disabled:
			fmt.Fprintf(tw, "%s\tdisabled\t%s\n", name, s.Transport)
		default:
			fmt.Fprintf(tw, "%s\tnot running\t%s\n", name, s.Transport)
		}
	}
	tw.Flush()
	for _, name := range names {
		if e, ok := cfg.Unconfigured[name]; ok {
			fmt.Fprintf(w, "  %s: not configured: %s\n", name, e.Reason())
		}
	}
}

// noDaemonStatus says no daemon runs, lists the config's servers and, for
// a replica, shows the cluster it shares the store with; it exits 3 either
// way.
func noDaemonStatus(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths, socket string, asJSON bool) error {
	var cluster *apitype.Cluster
	var clusterErr error
	if cfg.Store != "" {
		cluster, clusterErr = readCluster(ctx, env, cfg)
	}
	if asJSON {
		out := struct {
			Daemon  any              `json:"daemon"`
			Cluster *apitype.Cluster `json:"cluster,omitempty"`
			Error   string           `json:"error,omitempty"`
		}{Cluster: cluster}
		if clusterErr != nil {
			out.Error = "reading the cluster: " + clusterErr.Error()
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
		return &exitError{ExitTransport, errSilent}
	}
	fmt.Fprintf(env.Stdout, "daemon   not running (socket %s); mcpx call, tools, jobs or serve start it\n", socket)
	printConfigServers(env.Stdout, cfg)
	statusSignIns(env, cfg, paths)
	printCluster(env.Stdout, cluster, time.Now())
	if clusterErr != nil {
		fmt.Fprintf(env.Stdout, "\ncluster  reading it from the shared store failed: %v\n", clusterErr)
	}
	return &exitError{ExitTransport, errSilent}
}

// ago prints a duration since t, coarsely.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// printHosts prints each connected host with its profile.
func printHosts(w io.Writer, hosts []apitype.ConnectedHost) {
	if len(hosts) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  HOST\tCLIENT\tPROTOCOL\tTIMER\tPROFILE")
	for _, h := range hosts {
		client, proto := h.Client, h.Protocol
		if client == "" {
			client = "(no clientInfo yet)"
		}
		if proto == "" {
			proto = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", h.ID, progressSanitize(client), proto, hostTimer(h.Profile), h.Profile.Source)
	}
	tw.Flush()
}

// hostTimer says a profile's timer in words: "60s, reset by progress",
// "10m0s, hard", "none".
func hostTimer(p apitype.HostProfile) string {
	if p.TimeoutMs <= 0 {
		return "none"
	}
	d := (time.Duration(p.TimeoutMs) * time.Millisecond).String()
	if p.ResetOnProgress {
		return d + ", reset by progress"
	}
	return d + ", hard"
}
