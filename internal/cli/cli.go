// Package cli is the mcpx command line: one file per verb, each a client of
// the daemon's local API (through package localclient) except `daemon`,
// `demo`, `token`, and `serve --in-process` and `serve --http`, which run
// what cmd/mcpx hands them in Env. The package never imports the daemon's internals.
//
// Exit codes: 0 ok, 1 the tool reported an error, 2 usage or config
// error, 3 transport or daemon failure, 130 interrupted.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"mcpx/internal/apitype"
	"mcpx/internal/audit"
	"mcpx/internal/config"
	"mcpx/internal/hosttoken"
	"mcpx/internal/oauth"
)

// Exit codes, the local API's own (a /v1 call's final event carries them).
const (
	ExitOK          = apitype.ExitOK
	ExitToolError   = apitype.ExitToolError
	ExitUsage       = apitype.ExitUsage
	ExitTransport   = apitype.ExitTransport
	ExitInterrupted = apitype.ExitInterrupted
)

// Env is what the CLI needs from its process. cmd/mcpx fills it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)

	Version    string
	Build      string // config.BuildID of this executable
	Executable string // this executable, for the default config and the daemon

	// RunDaemon runs the daemon until ctx ends, calling ready (which may
	// be nil) once it serves.
	RunDaemon func(ctx context.Context, cfg *config.Config, files config.DaemonFiles, log *slog.Logger, ready func()) error
	// ServeInProcess serves one host on conn with upstreams of its own.
	ServeInProcess func(ctx context.Context, cfg *config.Config, conn io.ReadWriteCloser, log *slog.Logger) error
	// LookInProcess is ServeInProcess for a gateway that only looks (mcpx
	// doctor's probes): it keeps no jobs and never migrates a shared store.
	LookInProcess func(ctx context.Context, cfg *config.Config, conn io.ReadWriteCloser, log *slog.Logger) error
	// ServeHTTP serves MCP over Streamable HTTP on ln with upstreams of its
	// own until ctx ends, requiring one of tokens unless it is nil.
	ServeHTTP func(ctx context.Context, cfg *config.Config, ln net.Listener, tokens *hosttoken.HostTokens, log *slog.Logger) error
	// SerialStdio, when set, is called as mcpx serve starts serving one
	// host on stdin and stdout (in-process or forwarding to the daemon):
	// the process then does one short step after another, each waking
	// the next, and runs them on one thread (see cmd/mcpx).
	SerialStdio func()
	// OpenSignIns opens the sign-ins kept in the shared store cfg names
	// (daemon.OpenSignIns), and ReadCluster reads its replicas
	// (daemon.ReadCluster): the CLI reads the store only through them,
	// where no daemon runs to ask.
	OpenSignIns func(ctx context.Context, cfg *config.Config, getenv func(string) string) (oauth.Records, func(), error)
	ReadCluster func(ctx context.Context, cfg *config.Config) (*apitype.Cluster, error)
	// ProbeStore looks at the shared store cfg names without changing it
	// (daemon.ProbeStore, for mcpx doctor), and WriteAudit appends the
	// CLI's own records to the audit table of the store cfg's daemon
	// keeps, the SQLite file jobs if cfg names none (daemon.WriteAudit).
	ProbeStore func(ctx context.Context, cfg *config.Config) (apitype.StoreProbe, error)
	WriteAudit func(ctx context.Context, cfg *config.Config, jobs string, recs []audit.Record) error
}

// command is one verb.
type command struct {
	name  string
	usage string // arguments after the verb
	short string
	long  string
	// setFlags declares the verb's flags; run gets the flag set's args.
	setFlags func(fs *flag.FlagSet)
	run      func(ctx context.Context, env *Env, args []string) error
	// rawArgs hands run every argument unparsed.
	rawArgs bool
	// noArgs: the verb takes no arguments besides its flags; any is a
	// usage error.
	noArgs bool
}

func commands() []*command {
	return []*command{cmdCall(), cmdExec(), cmdTools(), cmdStatus(), cmdJobs(), cmdAudit(), cmdServe(), cmdDaemon(), cmdStop(), cmdReload(), cmdRestart(), cmdUI(), cmdLogin(), cmdLogout(), cmdToken(), cmdImport(), cmdInstall(), cmdUninstall(), cmdDoctor(), cmdDemo(), cmdVersion()}
}

// usageError is a mistake in the command line: exit 2, with one line
// saying so and where the verb's help is.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit code other than the default for its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Run runs the command line args (without the program name) and returns
// the exit code.
func Run(ctx context.Context, args []string, env *Env) int {
	if env.LookupEnv == nil {
		env.LookupEnv = os.LookupEnv
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				fmt.Fprint(env.Stdout, verbHelp(c))
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "mcpx: unknown command %q (see mcpx help)\n", args[1])
			return ExitUsage
		}
		w := env.Stdout
		code := ExitOK
		if len(args) == 0 {
			w, code = env.Stderr, ExitUsage
		}
		fmt.Fprint(w, mainHelp())
		return code
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(env.Stderr, "mcpx: unknown command %q (see mcpx help)\n", args[0])
		return ExitUsage
	}
	if c.rawArgs {
		return report(env, c, c.run(ctx, env, args[1:]))
	}
	fs := flag.NewFlagSet("mcpx "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.setFlags != nil {
		c.setFlags(fs)
	}
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(env.Stdout, verbHelp(c))
			return ExitOK
		}
		fmt.Fprint(env.Stderr, usageLine(c, err.Error()))
		return ExitUsage
	}
	if f := fs.Lookup("config"); f != nil && f.Value.String() == "" {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "config" })
		if given {
			return report(env, c, usagef("--config needs a file (leave it out for the default config)"))
		}
	}
	if c.noArgs && len(rest) > 0 {
		return report(env, c, usagef("unexpected argument %q", rest[0]))
	}
	return report(env, c, c.run(ctx, env, rest))
}

// parseInterspersed parses args with fs, allowing flags after positional
// arguments ("mcpx call demo.echo '{}' --json"), and returns the
// positional arguments in order. "--" ends the flags; "-" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		n, terminated := flagPrefix(fs, args)
		if err := fs.Parse(args[:n]); err != nil {
			return nil, err
		}
		args = args[n:]
		if terminated {
			return append(pos, args[1:]...), nil
		}
		if len(args) > 0 {
			pos, args = append(pos, args[0]), args[1:]
		}
	}
	return pos, nil
}

// flagPrefix returns how many leading args are flags and their values, as
// fs.Parse reads them, and whether they end at a "--".
func flagPrefix(fs *flag.FlagSet, args []string) (n int, terminated bool) {
	for n < len(args) {
		a := args[n]
		switch {
		case a == "--":
			return n, true
		case len(a) < 2 || a[0] != '-':
			return n, false
		}
		n++
		name := strings.TrimPrefix(a[1:], "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // fs.Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if n < len(args) {
			n++ // the flag's value
		}
	}
	return n, false
}

// report prints err as one line a person can act on and picks the code.
func report(env *Env, c *command, err error) int {
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	var ce *config.Error
	var ee *exitError
	switch {
	case errors.As(err, &ue):
		fmt.Fprint(env.Stderr, usageLine(c, ue.msg))
		return ExitUsage
	case errors.As(err, &ce):
		fmt.Fprintf(env.Stderr, "mcpx: %v\n", ce)
		return ExitUsage
	case errors.As(err, &ee):
		if ee.err != errSilent {
			fmt.Fprintf(env.Stderr, "mcpx: %v\n", ee.err)
		}
		return ee.code
	default:
		fmt.Fprintf(env.Stderr, "mcpx: %v\n", err)
		return ExitTransport
	}
}

// usageLine is what a usage error prints: one line, as Go's own tools do,
// pointing at the help rather than burying the error under it.
func usageLine(c *command, msg string) string {
	return fmt.Sprintf("mcpx %s: %s (see mcpx %s --help)\n", c.name, msg, c.name)
}

// errSilent is an exitError's error when the verb already said everything.
var errSilent = errors.New("")

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func mainHelp() string {
	var b strings.Builder
	b.WriteString("mcpx is an MCP gateway: many upstream MCP servers behind one endpoint,\nwith long-running tool calls done right.\n\nUsage:\n\n\tmcpx <command> [arguments]\n\nCommands:\n\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "\t%-10s %s\n", c.name, c.short)
	}
	b.WriteString("\nRun \"mcpx help <command>\" for a command's flags.\n")
	return b.String()
}

func verbHelp(c *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: mcpx %s", c.name)
	if c.usage != "" {
		b.WriteString(" " + c.usage)
	}
	b.WriteString("\n\n" + strings.TrimSpace(c.long) + "\n")
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.setFlags != nil {
		c.setFlags(fs)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("\nFlags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
	}
	return b.String()
}

// getenv returns an environment variable, "" if unset.
func (env *Env) getenv(k string) string {
	v, _ := env.LookupEnv(k)
	return v
}
