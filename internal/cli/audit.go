package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"mcpx/internal/apitype"
)

func cmdAudit() *command {
	var configPath, person, tool, server, outcome, kind, since, until string
	var limit int
	var asJSON bool
	return &command{
		name:   "audit",
		noArgs: true,
		short:  "query the audit log: who called what, when, and how it ended",
		long: `
Audit prints the records of the daemon's audit log (mcpx.audit, kept in its job
store), newest first: tool calls, jobs, refusals, sign-ins and the operator's
actions, each with its principal, host, server, tool, outcome and duration.
Records never hold a call's arguments, only their SHA-256.

Only the local user may read it, on the daemon's socket.

--since and --until take an RFC 3339 time (2026-01-02T15:04:05Z) or a duration
back from now (90m, 24h); --since is included, --until is not.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.StringVar(&person, "person", "", "the principal's `ID or name`")
			fs.StringVar(&tool, "tool", "", "the upstream's own `name` of the tool")
			fs.StringVar(&server, "server", "", "the server `name`")
			fs.StringVar(&outcome, "outcome", "", "how it ended: ok, tool_error, error, timeout, cancelled, refused, ...")
			fs.StringVar(&kind, "kind", "", "call, call.cancel, job.start, job.promote, job.end, job.cancel, refusal, signin, signout, admin, token")
			fs.StringVar(&since, "since", "", "records at or after this `time`")
			fs.StringVar(&until, "until", "", "records before this `time`")
			fs.IntVar(&limit, "limit", 100, "at most this many records")
			fs.BoolVar(&asJSON, "json", false, "print the records as JSON")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			q := url.Values{}
			for k, v := range map[string]string{"principal": person, "tool": tool, "server": server, "outcome": outcome, "kind": kind} {
				if v != "" {
					q.Set(k, v)
				}
			}
			now := time.Now()
			for _, t := range []struct{ name, v string }{{"since", since}, {"until", until}} {
				if t.v == "" {
					continue
				}
				at, err := auditTime(t.v, now)
				if err != nil {
					return usagef("--%s: %v", t.name, err)
				}
				q.Set(t.name, at.UTC().Format(time.RFC3339Nano))
			}
			if limit < 1 {
				return usagef("--limit must be at least 1")
			}
			q.Set("limit", strconv.Itoa(limit))
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			c, _ := client(env, cfg, paths)
			recs, err := c.Audit(ctx, q)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(recs)
			}
			printAudit(env, recs.Records)
			return nil
		},
	}
}

// auditTime reads --since or --until: an RFC 3339 time, or a duration
// back from now.
func auditTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (24h), not %q", s)
	}
	return now.Add(-d), nil
}

func printAudit(env *Env, recs []apitype.AuditRecord) {
	if len(recs) == 0 {
		fmt.Fprintln(env.Stdout, "no records")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKIND\tPRINCIPAL\tHOST\tSERVER/TOOL\tOUTCOME\tTOOK\tJOB\tDETAIL")
	for _, r := range recs {
		who := r.Principal
		if r.Name != "" {
			who = r.Name + " (" + r.Principal + ")"
		}
		what := r.Action
		if r.Tool != "" || r.Server != "" {
			what = strings.Trim(r.Server+"/"+r.Tool, "/")
		}
		took := ""
		if r.DurationMS > 0 || r.Kind == "call" {
			took = (time.Duration(r.DurationMS) * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), r.Kind, dash(who),
			dash(r.Host), dash(what), r.Outcome, dash(took), dash(r.Job), r.Detail)
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
