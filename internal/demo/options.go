package demo

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"mcpx/internal/mcp"
)

// Eras accepted by [Options.Era].
const (
	EraAuto   = "auto"   // both: initialize selects legacy, modern _meta selects 2026-07-28
	EraLegacy = "legacy" // initialize only; server/discover is unknown, modern _meta is ignored
	EraModern = "modern" // 2026-07-28 only; initialize is refused naming the supported versions
)

// Options configure [Serve]. A nil *Options, and every zero field, means the
// default. Options are read once when Serve starts.
type Options struct {
	// Era is EraAuto (the default when empty), EraLegacy or EraModern.
	Era string
	// MaxVersion is the newest legacy revision initialize negotiates; the
	// default is 2025-11-25. It must be a legacy revision.
	MaxVersion string
	// IgnoreDiscover makes server/discover go unanswered, like a legacy
	// server that silently drops unknown methods.
	IgnoreDiscover bool
	// InitDelay delays the answers to initialize and server/discover. The
	// delay of initialize is not cut short by notifications/cancelled.
	InitDelay time.Duration
	// PageSize, when positive, splits tools/list into pages of that many
	// tools with opaque cursors.
	PageSize int
	// Record is a file to which every [Event] is appended as one JSON line.
	Record string
	// RecordProgress also records each progress notification sent
	// ([EventProgress]), for measuring what reaches a host and when.
	RecordProgress bool
	// OnEvent, when set, is called with every [Event] in order. It runs with
	// the recorder's lock held: it must not block or call back into Serve.
	OnEvent func(Event)
	// WireLog is a file to which every line read ("< " prefix) and written
	// ("> " prefix) is appended as on the wire: a line read is logged as
	// framed (surrounding spaces trimmed), before it is handled; a line
	// written is logged just before it is written. Blank and oversize lines
	// read are not logged.
	WireLog string
	// HTTP is the address (host:port) [ServeHTTP] listens on; empty means
	// 127.0.0.1:0. [Serve] ignores it; `mcpx demo -http ADDR` serves HTTP.
	HTTP string
	// SSECloseAfter, when positive, makes every connection that carries a
	// legacy request's SSE stream (its POST, or a GET resuming it) end after
	// that many message events, with a retry event, before the stream is
	// complete: the client must resume with GET and Last-Event-ID.
	SSECloseAfter int
	// NoGet makes a GET without Last-Event-ID answer 405 instead of opening
	// the legacy session's standalone SSE stream.
	NoGet bool
	// PingClient makes the server send a ping request to the client on a
	// legacy tools/call's SSE stream, and wait for the client's POSTed
	// answer, before running the tool.
	PingClient bool
	// KeepAlive is the interval of the comments on the standalone GET
	// stream; the default is 15s.
	KeepAlive time.Duration
	// Surface adds resources, a resource template, prompts, completion and
	// logging, and the tools log and touch (surface.go).
	Surface bool
	// Tasks adds the research tool, which runs as a task of the
	// 2026-07-28 tasks extension (tasks.go), served over stdio only.
	Tasks bool
	// ResourceHost names the server in its resource URIs
	// (demo://<ResourceHost>/...); the default is "demo".
	ResourceHost string
	// Logger receives the server's own log; nil discards it.
	Logger *slog.Logger
	// Exit ends the process for the crash tool; nil means [os.Exit].
	Exit func(code int)
}

// config is Options with the defaults filled in.
type config struct {
	Options
	supported []string // every version this server names: discover, -32022
	legacy    []string // legacy revisions initialize may agree to, newest first
}

func newConfig(opts *Options) (*config, error) {
	c := &config{}
	if opts != nil {
		c.Options = *opts
	}
	if c.Era == "" {
		c.Era = EraAuto
	}
	if c.MaxVersion == "" {
		c.MaxVersion = mcp.LatestLegacy
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = defaultKeepAlive
	}
	if c.Exit == nil {
		c.Exit = os.Exit
	}
	switch {
	case c.Era != EraAuto && c.Era != EraLegacy && c.Era != EraModern:
		return nil, fmt.Errorf("demo: unknown era %q (want auto, legacy or modern)", c.Era)
	case !mcp.IsLegacy(c.MaxVersion):
		return nil, fmt.Errorf("demo: max version %q is not a legacy revision (want one of %v)", c.MaxVersion, mcp.LegacyVersions)
	case c.InitDelay < 0:
		return nil, fmt.Errorf("demo: negative init delay %v", c.InitDelay)
	case c.PageSize < 0:
		return nil, fmt.Errorf("demo: negative page size %d", c.PageSize)
	case c.SSECloseAfter < 0:
		return nil, fmt.Errorf("demo: negative -sse-close-after %d", c.SSECloseAfter)
	case c.KeepAlive < 0:
		return nil, fmt.Errorf("demo: negative keep-alive interval %v", c.KeepAlive)
	}
	for _, v := range mcp.LegacyVersions {
		if v <= c.MaxVersion {
			c.legacy = append(c.legacy, v)
		}
	}
	if c.Era != EraLegacy {
		c.supported = append(c.supported, mcp.Version20260728)
	}
	if c.Era != EraModern {
		c.supported = append(c.supported, c.legacy...)
	}
	return c, nil
}

// ParseFlags parses the arguments of `mcpx demo [flags]` with a flag set
// named "demo" that reports to stderr. Logger and Exit are left nil for the
// caller to set. -h yields [flag.ErrHelp]; any error is a usage error.
func ParseFlags(args []string, stderr io.Writer) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Era, "era", EraAuto, "protocol `era`: auto (both), legacy (initialize only) or modern (2026-07-28 only)")
	fs.StringVar(&o.MaxVersion, "max-version", mcp.LatestLegacy, "newest legacy protocol `revision` that initialize agrees to")
	fs.BoolVar(&o.IgnoreDiscover, "ignore-discover", false, "never answer server/discover, like a legacy server that drops unknown methods")
	fs.DurationVar(&o.InitDelay, "init-delay", 0, "wait this long before answering initialize and server/discover")
	fs.IntVar(&o.PageSize, "page-size", 0, "split tools/list into pages of `n` tools (0: one page)")
	fs.StringVar(&o.Record, "record", "", "append every request, cancellation and outcome, one JSON object a line, to `file`")
	fs.BoolVar(&o.RecordProgress, "record-progress", false, "also record each progress notification sent (with -record)")
	fs.StringVar(&o.WireLog, "wire-log", "", "append every line read (\"< \") and written (\"> \") to `file`; over HTTP also the headers that matter (\"H \")")
	fs.StringVar(&o.HTTP, "http", "", "serve Streamable HTTP at http://`addr`/mcp instead of stdio, until stdin ends or a signal")
	fs.IntVar(&o.SSECloseAfter, "sse-close-after", 0, "HTTP: end each legacy SSE connection after `n` events, so that the client must resume (0: never)")
	fs.BoolVar(&o.NoGet, "no-get", false, "HTTP: answer 405 to a GET without Last-Event-ID (no standalone stream)")
	fs.BoolVar(&o.PingClient, "ping-client", false, "HTTP: send a ping request to the client before running each legacy tools/call")
	fs.BoolVar(&o.Surface, "surface", false, "also serve resources, a resource template, prompts, completion and logging, and the tools log and touch")
	fs.BoolVar(&o.Tasks, "tasks", false, "also serve the research tool, a task of the 2026-07-28 tasks extension (stdio only)")
	fs.StringVar(&o.ResourceHost, "resource-host", "", "the `name` in the surface's resource URIs, demo://NAME/... (default demo)")
	fs.DurationVar(&o.KeepAlive, "keep-alive", 0, "HTTP: interval of keep-alive comments on the standalone GET stream (0: 15s)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: mcpx demo [flags]

Runs mcpx's demo MCP server on stdin and stdout: tools with real progress
and cancellation (export, scan, wait, ...), for trying mcpx and testing it.
With -http it serves Streamable HTTP on one endpoint, /mcp, instead, prints
"listening on http://ADDR/mcp" once ready, and runs until stdin ends or it
gets SIGINT or SIGTERM.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))
	}
	if _, err := newConfig(o); err != nil {
		return nil, err
	}
	if o.HTTP == "" {
		for _, name := range []string{"sse-close-after", "no-get", "ping-client", "keep-alive"} {
			if set(fs, name) {
				return nil, fmt.Errorf("demo: -%s needs -http", name)
			}
		}
	}
	return o, nil
}

// toolsOf returns the tools served: base, plus the surface's with Surface.
func (c *config) toolsOf(base []tool) []tool {
	if !c.Surface {
		return base
	}
	return append(slices.Clip(base), surfaceTools...)
}

// set reports whether flag name was given.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}
