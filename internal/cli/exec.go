package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"mcpx/internal/apitype"
)

func cmdExec() *command {
	var (
		configPath string
		rawJSON    bool
		quiet      bool
		timeout    time.Duration
		background bool
	)
	return &command{
		name:  "exec",
		usage: "[flags] FILE | -",
		short: "run a script that calls tools",
		long: `
Exec runs a JavaScript or TypeScript script through the mcpx daemon (started
if needed), as a host's mcpx_exec runs it, and prints its result on stdout,
its progress on stderr. FILE is the script, or - to read it from stdin.

In the script, await tools.SERVER.TOOL(args) calls a tool and gives its
structured result, else its text; a tool error throws. Also: mcpx.call(name,
args), mcpx.search(words), progress(value, total, message), sleep(ms),
setTimeout and console.log (printed after the result). Top-level await and
return work; the returned value is the result.

Ctrl-C stops the script and cancels its calls upstream with the reason
"interrupted by user". --timeout can only shorten the configured maximum.

--background starts the script as a job and prints its id at once (with
--json, {"job_id": ...}); mcpx jobs show, wait and cancel take it from there.

Exit status: 0 ok, 1 the script failed, 2 usage, 3 transport, daemon or
timeout, 130 interrupted.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&rawJSON, "json", false, "print the raw result JSON")
			fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
			fs.DurationVar(&timeout, "timeout", 0, "hard maximum for this script")
			fs.BoolVar(&background, "background", false, "start the script as a job and print its id")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("want one script file, or - for stdin")
			}
			var code []byte
			var err error
			if args[0] == "-" {
				code, err = io.ReadAll(env.Stdin)
			} else {
				code, err = os.ReadFile(args[0])
			}
			if err != nil {
				return fmt.Errorf("reading the script: %w", err)
			}
			if strings.TrimSpace(string(code)) == "" {
				return usagef("the script is empty")
			}
			cfg, paths, err := loadConfig(env, configPath)
			if err != nil {
				return err
			}
			c, err := connect(ctx, env, cfg, paths)
			if err != nil {
				return err
			}
			req := apitype.ExecRequest{Code: string(code), TimeoutMs: timeout.Milliseconds()}
			if background {
				j, err := c.StartExecJob(ctx, req)
				if err != nil {
					return err
				}
				return printJobID(env, j.ID, rawJSON)
			}
			call := func(ctx context.Context, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
				final, err := c.Exec(ctx, req, onEvent)
				if err == nil && final != nil && len(final.Result) > 0 && !rawJSON {
					final.Result = scriptResult(final.Result)
				}
				return final, err
			}
			label := "script"
			if args[0] != "-" {
				label = args[0]
			}
			return runCall(ctx, env, c, label, call, rawJSON, quiet)
		},
	}
}
