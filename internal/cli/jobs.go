package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/localclient"
)

func cmdJobs() *command {
	var configPath string
	var asJSON bool
	return &command{
		name:  "jobs",
		usage: "[flags] [show ID | wait ID | cancel ID]",
		short: "list, show, wait for or cancel the jobs long calls became",
		long: `
Jobs lists the jobs of the daemon serving this config, newest first: calls
and scripts that outlived their host's timer, or were started in the
background, whose results mcpx keeps (across restarts: it starts the
daemon if none runs, as call does). "show ID" prints one job with its
result; "wait ID" waits for it to end, showing its progress on stderr
(Ctrl-C stops waiting and leaves the job running), then prints its result
as call does; "cancel ID" cancels it at its server. Results print as call
prints them (--json: the job as JSON).

Exit status: 0 ok, 1 no such job (unknown or expired) or, for wait, a job
that failed or whose tool reported an error, 2 usage, 3 transport or
daemon, 130 interrupted (wait).`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			verb := ""
			if len(args) > 0 {
				verb = args[0]
				if verb != "show" && verb != "wait" && verb != "cancel" {
					return usagef("unknown jobs command %q", verb)
				}
				if len(args) != 2 {
					return usagef("%s needs one job id", verb)
				}
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			// The jobs outlive the daemon, in its store: reading them
			// starts it, as a call does.
			c, err := connect(ctx, env, cfg, paths)
			if err != nil {
				return err
			}
			var out any
			switch verb {
			case "":
				out, err = c.Jobs(ctx)
			case "show":
				out, err = c.Job(ctx, args[1], 0)
			case "cancel":
				out, err = c.CancelJob(ctx, args[1])
			case "wait":
				out, err = waitJob(ctx, env, c, args[1], asJSON)
			}
			var de *localclient.DaemonError
			if errors.As(err, &de) && de.Status == http.StatusNotFound {
				return &exitError{ExitToolError, err} // an unknown or expired id
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			switch v := out.(type) {
			case *apitype.Jobs:
				printJobs(env, v.Jobs, time.Now())
			case *apitype.Job:
				if verb == "wait" {
					return printJobOutcome(env, v)
				}
				printJob(env, v)
			}
			return nil
		},
	}
}

// waitJob waits for job id to end, printing its progress on stderr; an
// interrupt stops the wait and leaves the job running.
func waitJob(ctx context.Context, env *Env, c *localclient.Client, id string, quiet bool) (*apitype.Job, error) {
	var bar *progressBar
	for {
		j, err := c.Job(ctx, id, time.Second)
		if err != nil {
			bar.finish()
			if ctx.Err() != nil {
				fmt.Fprintf(env.Stderr, "stopped waiting; job %s goes on (mcpx jobs show %s)\n", id, id)
				return nil, &exitError{ExitInterrupted, errSilent}
			}
			return nil, err
		}
		if j.Status != "running" {
			bar.finish()
			return j, nil
		}
		if quiet {
			continue
		}
		if bar == nil {
			tty, width := false, 80
			if f, ok := env.Stderr.(*os.File); ok {
				width, tty = terminalWidth(f)
			}
			bar = newProgressBar(env.Stderr, tty, width, j.ID+" "+jobName(j), func() time.Time { return time.Now() })
			bar.start = j.Created
		}
		if p := j.Progress; p != nil {
			bar.Update(p.Progress, p.Total, p.Message)
		}
		bar.Tick()
	}
}

// finish is Finish on a bar that may be nil.
func (b *progressBar) finish() {
	if b != nil {
		b.Finish()
	}
}

// jobName is what a job ran: server.tool, or "script".
func jobName(j *apitype.Job) string {
	if isScriptJob(j) {
		return "script"
	}
	return j.Server + "." + j.Tool
}

// isScriptJob reports whether j runs a script (mcpx_exec).
func isScriptJob(j *apitype.Job) bool { return j.Server == "" && j.Tool == scriptTool }

// scriptTool is the tool a script's job names: mcpx's own mcpx_exec.
const scriptTool = "mcpx_exec"

// printJobOutcome prints an ended job as call prints a call's end: its
// result on stdout (exit 1 for a tool error), or why it has none.
func printJobOutcome(env *Env, j *apitype.Job) error {
	if len(j.Result) > 0 {
		printJobResult(env.Stdout, j)
		if resultIsError(j.Result) {
			return &exitError{ExitToolError, errSilent}
		}
		return nil
	}
	why := j.Error
	if why == "" {
		why = "no result"
	}
	if l := j.Late; l != nil {
		why += fmt.Sprintf(" (its call went on and ended %s after that: mcpx jobs show %s has its late result)", l.Status, j.ID)
	}
	return &exitError{ExitToolError, fmt.Errorf("job %s %s: %s", j.ID, j.Status, why)}
}

// resultIsError reports whether a tool result says isError.
func resultIsError(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(raw, &r) == nil && r.IsError
}

func jobProgress(p *apitype.Progress) string {
	if p == nil {
		return "working…"
	}
	s := fmt.Sprintf("%g", p.Progress)
	if p.Total != nil && *p.Total > 0 {
		s = fmt.Sprintf("%3.0f%% (%g/%g)", 100*p.Progress / *p.Total, p.Progress, *p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

func printJobs(env *Env, jobs []apitype.Job, now time.Time) {
	if len(jobs) == 0 {
		fmt.Fprintln(env.Stdout, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tTOOL\tAGE\tPROGRESS")
	for _, j := range jobs {
		prog := "-"
		if j.Status == "running" || j.Progress != nil {
			prog = progressSanitize(jobProgress(j.Progress))
		}
		status := j.Status
		if j.Late != nil {
			status += " (late " + j.Late.Status + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, status, jobName(&j), now.Sub(j.Created).Round(time.Second), prog)
	}
	tw.Flush()
}

func printJob(env *Env, j *apitype.Job) {
	fmt.Fprintf(env.Stdout, "job      %s\nstatus   %s\ntool     %s\nstarted  %s\n", j.ID, j.Status, jobName(j), j.Created.Format(time.RFC3339))
	if !j.Finished.IsZero() {
		fmt.Fprintf(env.Stdout, "ended    %s\n", j.Finished.Format(time.RFC3339))
	}
	if j.Progress != nil {
		fmt.Fprintf(env.Stdout, "progress %s\n", progressSanitize(jobProgress(j.Progress)))
	}
	out := resultWriter{w: env.Stdout, tty: isTerminal(env.Stdout)}
	if j.Note != "" {
		out.printf("note     %s\n", j.Note)
	}
	if j.Error != "" {
		out.printf("error    %s\n", j.Error) // an upstream's words
	}
	if len(j.Result) > 0 {
		if resultIsError(j.Result) {
			fmt.Fprintln(env.Stdout, "result (the tool reported an error):")
		} else {
			fmt.Fprintln(env.Stdout, "result:")
		}
		printJobResult(env.Stdout, j)
	}
	printLateEnd(env, j)
}

// printStatusJobs prints the daemon's running jobs, for status.
func printStatusJobs(env *Env, jobs []apitype.Job, now time.Time) {
	if len(jobs) == 0 {
		return
	}
	fmt.Fprintln(env.Stdout, "\nJOBS RUNNING")
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, jobName(&j), ago(now, j.Created), progressSanitize(jobProgress(j.Progress)))
	}
	tw.Flush()
}

// startJob starts req as a job and prints its id.
func startJob(ctx context.Context, env *Env, c *localclient.Client, req apitype.CallRequest, asJSON bool) error {
	j, err := c.StartJob(ctx, req)
	if err != nil {
		return err
	}
	return printJobID(env, j.ID, asJSON)
}

// printJobID prints a job's id as --background does: alone on a line, or
// as {"job_id": ...} with --json.
func printJobID(env *Env, id string, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(struct {
			JobID string `json:"job_id"`
		}{id})
	}
	fmt.Fprintln(env.Stdout, id)
	return nil
}
