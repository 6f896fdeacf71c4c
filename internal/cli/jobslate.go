package cli

import (
	"fmt"
	"time"

	"mcpx/internal/apitype"
)

// printLateEnd prints a job's late end, if it has one: the end of an
// earlier attempt's call, which went on at an mcpx that had lost its
// lease and ended after the job was taken from it. The job's own status
// stands above it; this is what that call produced, kept so that it is
// not lost.
func printLateEnd(env *Env, j *apitype.Job) {
	l := j.Late
	if l == nil {
		return
	}
	fmt.Fprintf(env.Stdout, "late     %s at %s, after the job was taken from the mcpx that ran it (its lease lost)\n", l.Status, l.At.Format(time.RFC3339))
	out := resultWriter{w: env.Stdout, tty: isTerminal(env.Stdout)}
	if l.Error != "" {
		out.printf("late error %s\n", l.Error) // an upstream's words
	}
	if l.Status == "completed" && len(l.Result) > 0 {
		fmt.Fprintln(env.Stdout, "late result:")
		printJobResult(env.Stdout, &apitype.Job{Server: j.Server, Tool: j.Tool, Result: l.Result})
	}
}
