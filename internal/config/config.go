// Package config reads the mcpx config file and validates it into plain
// structs.
//
// The file is JSON: the "mcpServers" block that MCP host READMEs show, plus an
// optional "mcpx" block of gateway settings. The contracts:
//
//   - Parsing is strict. Unknown keys, duplicate keys, wrong types and bad
//     values are errors naming the full field path, e.g.
//     "mcpServers.demo.comand: unknown field". Every error is an [*Error].
//   - A returned [Config] is complete: every default is filled in, every
//     server's timeouts and call limits are its effective values (its own,
//     else the global ones), ${VAR} references are expanded (see [LoadOptions]), and every
//     Cwd is absolute.
//   - Expanded values never appear in error messages, so a secret passed as
//     ${VAR} cannot leak through an error.
//   - A duration of 0 means "no timer" wherever durations appear.
//
// The package is a leaf: it imports only the standard library. It has no
// state; every function is safe for concurrent use, and a Config is safe for
// concurrent reads.
package config

import (
	"slices"
	"time"
)

// Config is a validated config file. Load, Parse and Default fill in every
// field; nothing in it is optional.
type Config struct {
	// File is the absolute path of the file the config came from, or ""
	// for the embedded default and for unnamed input.
	File string

	// Servers holds every upstream server by name, disabled ones included.
	Servers map[string]*Server

	// Unconfigured holds, by name, the servers whose own entry has a
	// mistake (an unset ${VAR}, a bad field) and why, when the file was
	// read with LoadOptions.PerServer; they are not in Servers. Nil when
	// there are none.
	Unconfigured map[string]*Error

	// Global timeouts. Servers carry their own effective copies of the
	// first three; these are what a server inherits when it sets none.
	IdleTimeout    time.Duration // reset by each progress notification
	MaxTimeout     time.Duration // hard maximum for one call
	StartupTimeout time.Duration // spawn or connect, then initialize
	ProbeTimeout   time.Duration // one protocol-revision probe

	ToolNames ToolNames

	// MaxMessageBytes limits one JSON-RPC message, in bytes.
	MaxMessageBytes int

	// IdleStop is how long a server may go without a request in flight
	// before mcpx stops it, for every server that sets none of its own; 0
	// means servers run until mcpx stops.
	IdleStop time.Duration

	// DaemonIdleExit is how long the daemon lingers with no client and no
	// running work before it exits; 0 means it never exits on its own.
	DaemonIdleExit time.Duration

	// Call limits of every server that sets none of its own (servers carry
	// their effective copies). MaxConcurrentCalls is the calls in flight to
	// one server at once (0: no limit); a call beyond it waits in a FIFO
	// queue of at most QueueLength calls (0: no queue, it fails at once)
	// for at most QueueTimeout (0: no timer but the call's hard maximum).
	MaxConcurrentCalls int
	QueueLength        int
	QueueTimeout       time.Duration

	// MaxCallsPerHost limits the requests one host connection may have in
	// flight at once; a request beyond it is refused at once. 0 means no
	// limit.
	MaxCallsPerHost int

	// InputTimeout is how long mcpx holds a legacy upstream's call whose
	// question it passed to a 2026-07-28 host as input_required, waiting
	// for the host's retry; then the upstream call is cancelled. 0 means
	// the relay's default (5 minutes).
	InputTimeout time.Duration

	// Jobs says how long, and how large, the results of jobs are kept.
	Jobs Jobs

	// CodeMode hides the servers' own tools from hosts: they see only
	// mcpx's meta-tools, and reach the tools through scripts (mcpx_exec)
	// or mcpx_call.
	CodeMode bool

	// HTTP is where the daemon serves MCP to hosts over TCP; its zero
	// value means nowhere.
	HTTP HostHTTP

	// Store is the job store several gateways share (replicas behind a
	// load balancer): a PostgreSQL URL, its ${VAR}s expanded. "" means
	// the embedded SQLite file under the state directory. It may hold a
	// password: it goes into no error and no log but redacted.
	Store string

	// SignInKey names the key sealing the OAuth sign-ins kept in Store
	// ("mcpx.oauth"); with no Store, sign-ins are files and it is unused.
	SignInKey SignInKey

	// Hosts holds what the config says of MCP hosts, by the
	// clientInfo.name each sends ("mcpx.hosts"); nil when it says
	// nothing. A reload applies it to calls that start from then on.
	Hosts map[string]*Host

	// Traces is where the daemon sends OpenTelemetry traces; its zero
	// value means nowhere.
	Traces Traces

	// Auth makes the HTTP face an OAuth protected resource ("mcpx.auth");
	// its zero value means bearer tokens alone.
	Auth Auth

	// Audit is the audit log ("mcpx.audit"); its zero value records
	// nothing.
	Audit Audit
}

// Names returns the names of all servers, disabled ones included, sorted.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Servers))
	for name := range c.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ToolNames says how upstream tools are named towards hosts.
type ToolNames struct {
	// Prefix is PrefixAlways or PrefixAuto.
	Prefix PrefixMode
	// Separator goes between server and tool name: 1 to 4 characters of
	// [A-Za-z0-9_.-]. No server name contains it, so a prefixed tool name
	// splits unambiguously at its first occurrence.
	Separator string
}

// PrefixMode says when a tool name gets its server's prefix.
type PrefixMode string

// Prefix modes.
const (
	// PrefixAlways exposes every tool as <server><separator><tool>.
	PrefixAlways PrefixMode = "always"
	// PrefixAuto leaves a tool unprefixed when no other server has a tool
	// of the same name.
	PrefixAuto PrefixMode = "auto"
)

// Transport is how mcpx reaches an upstream server.
type Transport string

// Transports. The file may also say "streamable-http", which is TransportHTTP.
const (
	TransportStdio Transport = "stdio" // child process, newline-delimited JSON-RPC
	TransportHTTP  Transport = "http"  // Streamable HTTP
	TransportSSE   Transport = "sse"   // legacy HTTP+SSE (2024-11-05)
)

// KnownProtocolVersions lists the MCP revisions a server's protocolVersion
// may name, oldest first. It must match the revisions mcpx speaks.
var KnownProtocolVersions = []string{
	"2024-11-05",
	"2025-03-26",
	"2025-06-18",
	"2025-11-25",
	"2026-07-28",
}

// Jobs is the "jobs" block of the mcpx settings: a job's result is kept
// for Retention after it ended, if it is at most MaxResultBytes.
//
// A task a host asks for is a job: it is granted the ttl it asks for, at
// most TaskMaxTTL (0: the retention), and told to poll every
// TaskPollInterval (0: a second). A 2026-07-28 host that takes tasks gets
// one for a call still running after TaskAfter.
type Jobs struct {
	Retention        time.Duration
	MaxResultBytes   int
	TaskMaxTTL       time.Duration
	TaskPollInterval time.Duration
	TaskAfter        time.Duration
	// LeaseTerm is how long a gateway's lease on its running jobs lasts
	// (0: the jobs engine's default): after about this long, a replica's
	// jobs are taken by another when it dies.
	LeaseTerm time.Duration
}
