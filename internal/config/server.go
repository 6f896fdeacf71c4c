package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Server is one upstream MCP server from the mcpServers block.
type Server struct {
	// Name is the server's key in mcpServers: 1 to 48 characters of
	// [A-Za-z0-9_-], never "mcpx" (in any case), never containing the tool
	// name separator.
	Name      string
	Transport Transport
	// Disabled servers are validated like the others, ${VAR} references
	// included (write ${VAR:-} to allow an unset one); the pool skips them.
	Disabled bool

	// Stdio servers: the child process. Command, Args, Env values and Cwd
	// have their ${VAR} references expanded. Cwd is absolute (a relative
	// one in the file is resolved against the file's directory), or "" when
	// unset. Args and Env are nil when empty.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// HTTP and SSE servers: an absolute http or https URL and extra request
	// headers, both expanded. Headers is nil when empty.
	URL     string
	Headers map[string]string
	// OAuth is the server's sign-in settings; nil when the file sets none
	// (a server may still ask for a sign-in: see docs/oauth.md).
	OAuth *OAuth
	// MaxConcurrentRequests limits an HTTP or SSE server's requests in
	// flight at once: DefaultMaxConcurrentRequests unless the file sets
	// it; 0 for stdio servers.
	MaxConcurrentRequests int

	// ProtocolVersion is one of KnownProtocolVersions, or "" to probe for
	// the newest revision the server speaks (the file's "auto").
	ProtocolVersion string

	// Effective timeouts: the server's own when the file sets them, else the
	// global ones. 0 means no timer.
	IdleTimeout    time.Duration
	MaxTimeout     time.Duration
	StartupTimeout time.Duration

	// TaskTools says, by tool name (the server's own), how a tool runs as
	// an MCP task: TaskOptional (the default for every tool), TaskRequired
	// (only as a task: a host that takes no tasks is refused) or
	// TaskForbidden (never). Nil when the file sets none.
	TaskTools map[string]string

	// Eager starts the server when mcpx starts, and again after it ends,
	// instead of on first use. (A crash loop still backs off.)
	Eager bool
	// IdleStop is how long the server may go without a request in flight
	// before mcpx stops it (its own, else the global one); 0 means never.
	// An eager server is never stopped for being idle.
	IdleStop time.Duration
	// PerHost gives each host session a session of the server of its own
	// (its own process, or its own HTTP session) for its calls, instead of
	// one session all hosts share: for a server that keeps state per
	// client (roots, a log level, subscriptions), or that asks its client
	// questions outside a call mcpx can name. A host's session starts with
	// its first call and stops when the host leaves (a stream connection
	// closes, a legacy HTTP session ends); stateless 2026-07-28 requests
	// share one per principal. IdleStop stops any of them, Eager or not
	// (Eager is the shared session's); with IdleStop 0 a principal's runs
	// until a reload or shutdown. Listings, resource subscriptions, the
	// log level hosts set, and calls without a host (mcpx call) still go to
	// one shared session, which therefore runs too.
	PerHost bool

	// CallLimits are the server's effective call limits: its own when the
	// file sets them, else the global ones.
	CallLimits
}

// CallLimits bound the calls in flight to one server. They apply call by
// call: a reload that changes only them applies to calls that start from
// then on, without restarting the server (see [Server.SameUpstream]).
type CallLimits struct {
	// MaxConcurrentCalls is how many calls may be in flight to the server
	// at once; 0 means no limit. It holds for every transport; an HTTP
	// server's MaxConcurrentRequests further limits the requests under way.
	MaxConcurrentCalls int
	// QueueLength is how many calls beyond the limit may wait, first come
	// first served, for one to end; a call beyond that fails at once. 0
	// means none may wait.
	QueueLength int
	// QueueTimeout is how long a call may wait in the queue before it
	// fails; 0 means no timer of its own (the call's hard maximum still
	// counts the wait).
	QueueTimeout time.Duration
}

// callLimits returns the global call limits, which a server inherits.
func (c *Config) callLimits() CallLimits {
	return CallLimits{MaxConcurrentCalls: c.MaxConcurrentCalls, QueueLength: c.QueueLength, QueueTimeout: c.QueueTimeout}
}

// SameUpstream reports whether s and o start and reach the same upstream
// in the same way: they differ at most in their call limits, which a
// reload applies to new calls without restarting the server.
func (s *Server) SameUpstream(o *Server) bool {
	a, b := *s, *o
	a.CallLimits, b.CallLimits = CallLimits{}, CallLimits{}
	return reflect.DeepEqual(a, b)
}

// Server fields by transport.
var (
	stdioFields  = []string{"command", "args", "env", "cwd"}
	httpFields   = []string{"url", "headers", "maxConcurrentRequests", "oauth"}
	serverFields = slices.Concat([]string{"type", "disabled", "protocolVersion",
		"idleTimeout", "maxTimeout", "startupTimeout", "maxConcurrentCalls", "queueLength", "queueTimeout", "eager", "idleStop", "perHost", "taskTools"},
		stdioFields, httpFields)
)

// maxNameLen bounds server names so that <server><separator><tool> stays
// within the 128 characters MCP allows a tool name.
const maxNameLen = 48

func (p *parser) server(name string, keyOff int, n *node, at path, cfg *Config) (*Server, error) {
	if err := checkName(name, cfg.ToolNames.Separator); err != nil {
		return nil, p.errorf(keyOff, at, "%v", err)
	}
	f, err := p.object(n, at, serverFields)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Name:           name,
		IdleTimeout:    cfg.IdleTimeout,
		MaxTimeout:     cfg.MaxTimeout,
		StartupTimeout: cfg.StartupTimeout,
		IdleStop:       cfg.IdleStop,
		CallLimits:     cfg.callLimits(),
	}
	if s.Transport, err = p.transport(n, f, at); err != nil {
		return nil, err
	}
	other := httpFields
	if s.Transport != TransportStdio {
		other = stdioFields
	}
	set := map[string]setter{
		"disabled": into(&s.Disabled, (*parser).boolean), "eager": into(&s.Eager, (*parser).boolean),
		"perHost": into(&s.PerHost, (*parser).boolean), "protocolVersion": into(&s.ProtocolVersion, (*parser).protocolVersion),
		"command": into(&s.Command, (*parser).command), "args": into(&s.Args, (*parser).args),
		"env": into(&s.Env, (*parser).env), "cwd": into(&s.Cwd, (*parser).cwd),
		"url": into(&s.URL, (*parser).url), "headers": into(&s.Headers, (*parser).headers),
		"maxConcurrentRequests": into(&s.MaxConcurrentRequests, intIn(1, maxConcurrentRequests)),
		"oauth":                 into(&s.OAuth, (*parser).oauth),
		"taskTools":             into(&s.TaskTools, (*parser).taskTools),
	}
	s.inheritedFields().add(set)
	for _, m := range n.members {
		at := at.key(m.key)
		if slices.Contains(other, m.key) {
			return nil, p.errorf(m.off, at, "not allowed for %s server", article(s.Transport))
		}
		if f, ok := set[m.key]; ok {
			if err := f(p, m.val, at); err != nil {
				return nil, err
			}
		}
	}
	if s.PerPerson() {
		for k := range s.Headers {
			if strings.EqualFold(k, "Authorization") {
				return nil, p.errorf(n.off, at, "a per-person server (oauth.accounts) cannot set an Authorization header: each person's own sign-in is sent")
			}
		}
	}
	if s.Transport != TransportStdio && s.MaxConcurrentRequests == 0 {
		s.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	return s, nil
}

func checkName(name, sep string) error {
	if len(name) == 0 || len(name) > maxNameLen || strings.IndexFunc(name, func(r rune) bool {
		return r >= 0x80 || !isWordByte(byte(r))
	}) >= 0 {
		return fmt.Errorf("invalid server name: want 1 to %d characters of [A-Za-z0-9_-]", maxNameLen)
	}
	if strings.EqualFold(name, "mcpx") {
		return fmt.Errorf("the server name %q is reserved for mcpx's own tools", name)
	}
	if strings.Contains(name, sep) {
		return fmt.Errorf("server name contains the tool name separator %q (rename the server or change mcpx.toolNames.separator)", sep)
	}
	return nil
}

// transport returns the server's transport: its type, else derived from
// whether it has a command (stdio) or a url (http).
func (p *parser) transport(n *node, f map[string]*node, at path) (Transport, error) {
	_, hasCommand := f["command"]
	_, hasURL := f["url"]
	tn, typed := f["type"]
	if !typed {
		switch {
		case hasCommand && hasURL:
			return "", p.errorf(n.off, at, "has both command and url (a server is either stdio, with command, or http, with url)")
		case hasCommand:
			return TransportStdio, nil
		case hasURL:
			return TransportHTTP, nil
		}
		return "", p.errorf(n.off, at, "command or url is required")
	}
	s, err := p.str(tn, at.key("type"))
	if err != nil {
		return "", err
	}
	var t Transport
	switch s {
	case "stdio":
		t = TransportStdio
	case "http", "streamable-http":
		t = TransportHTTP
	case "sse":
		t = TransportSSE
	default:
		return "", p.errorf(tn.off, at.key("type"), "unknown transport %q (want stdio, http, streamable-http or sse)", s)
	}
	switch {
	case t == TransportStdio && !hasCommand:
		return "", p.errorf(n.off, at, "command is required for a stdio server")
	case t != TransportStdio && !hasURL:
		return "", p.errorf(n.off, at, "url is required for %s server", article(t))
	}
	return t, nil
}

func article(t Transport) string {
	if t == TransportStdio {
		return "a stdio"
	}
	return "an " + string(t)
}

func (p *parser) protocolVersion(n *node, at path) (string, error) {
	v, err := p.str(n, at)
	if err != nil {
		return "", err
	}
	switch {
	case v == "" || v == "auto":
		return "", nil
	case slices.Contains(KnownProtocolVersions, v):
		return v, nil
	}
	return "", p.errorf(n.off, at, "unknown protocol version %q (want auto or one of %s)", v, strings.Join(KnownProtocolVersions, ", "))
}

// How a tool runs as an MCP task (Server.TaskTools).
const (
	TaskOptional  = "optional"
	TaskRequired  = "required"
	TaskForbidden = "forbidden"
)

// TaskSupport returns how tool runs as a task: TaskOptional unless the
// server's taskTools say otherwise.
func (s *Server) TaskSupport(tool string) string {
	if ts, ok := s.TaskTools[tool]; ok {
		return ts
	}
	return TaskOptional
}

func (p *parser) taskTools(n *node, at path) (map[string]string, error) {
	if n.kind != kindObject {
		return nil, p.errorf(n.off, at, "must be an object of tool names to %q, %q or %q", TaskOptional, TaskRequired, TaskForbidden)
	}
	out := make(map[string]string, len(n.members))
	for _, m := range n.members {
		s, err := p.str(m.val, at.key(m.key))
		if err != nil {
			return nil, err
		}
		switch s {
		case TaskOptional, TaskRequired, TaskForbidden:
			out[m.key] = s
		default:
			return nil, p.errorf(m.val.off, at.key(m.key), "must be %q, %q or %q", TaskOptional, TaskRequired, TaskForbidden)
		}
	}
	return out, nil
}
