// Package apitype holds the wire types of mcpx's local API, shared by the
// daemon's handlers and the CLI's client. It is the only thing the two
// sides share. Stdlib only.
package apitype

import (
	"encoding/json"
	"time"
)

// Routes of the local API, served on the daemon's unix socket.
const (
	PathStatus   = "/v0/status"
	PathTools    = "/v0/tools"
	PathCall     = "/v0/call"
	PathExec     = "/v0/exec"
	PathCancel   = "/v0/calls/{id}/cancel"
	PathShutdown = "/v0/shutdown"
	// PathStdio upgrades the connection to a raw host MCP stream: newline-
	// delimited JSON-RPC, exactly what a host writes to `mcpx serve`.
	PathStdio = "/v0/stdio"
	// PathMCP is the MCP endpoint (Streamable HTTP, every revision), on the
	// socket and on the daemon's TCP listener.
	PathMCP = "/mcp"
)

// UpgradeProtocol is the Upgrade token of PathStdio.
const UpgradeProtocol = "mcpx-stdio"

// HeaderVersion carries each side's build version.
const HeaderVersion = "Mcpx-Version"

// HeaderHandoff, "1" on an upgrade to PathStdio, offers to hand the host's
// stdin and stdout to the daemon instead of forwarding them; the daemon's
// 101 carries it back if it takes them. Then the client sends, in one
// message on the socket, three descriptors: the host's input, the host's
// output and a handoff table file (package hoststream), then one
// HandoffStart line; from then on the socket carries only HandoffEvent
// lines, daemon to client. Either side closing the socket ends the
// handoff.
const HeaderHandoff = "Mcpx-Handoff"

// HandoffStart is what the client had of the host's stream when it hands
// it over again, after a daemon gave it back: the daemon reads it before
// the host's input. Empty the first time.
type HandoffStart struct {
	// Replay is the host's initialize with the id HandoffReplayID, to
	// serve the host's session as it was; its answer is not written to
	// the host.
	Replay json.RawMessage `json:"replay,omitempty"`
	// Initialized: the host had sent notifications/initialized.
	Initialized bool `json:"initialized,omitempty"`
	// Rest is what the client had read of the host's messages and not
	// sent anywhere.
	Rest []byte `json:"rest,omitempty"`
}

// HandoffReplayID is the id of a replayed initialize.
const HandoffReplayID = `"mcpx-replayed-initialize"`

// HandoffEvent is one line the daemon writes on a handed-off host's socket:
// what serve needs to take the host's stdio back if the daemon stops or
// dies. One field is set.
type HandoffEvent struct {
	// Initialize is the host's initialize request, to replay on the next
	// daemon.
	Initialize json.RawMessage `json:"initialize,omitempty"`
	// Initialized: the host sent notifications/initialized.
	Initialized bool `json:"initialized,omitempty"`
	// Add and Remove carry a request id the handoff table could not hold:
	// read and not answered, then answered.
	Add    json.RawMessage `json:"add,omitempty"`
	Remove json.RawMessage `json:"remove,omitempty"`
	// End says why the daemon gave the stdio back: HandoffHostLeft (the
	// host closed its output: serve exits), HandoffStopping or
	// HandoffRefused.
	End string `json:"end,omitempty"`
	// Rest is what the daemon had read of the host's messages (or had
	// from HandoffStart.Rest) and not used: serve reads it before what
	// is still in the pipe.
	Rest []byte `json:"rest,omitempty"`
}

// Why a handoff ended (HandoffEvent.End).
const (
	HandoffHostLeft = "host-left"
	HandoffStopping = "stopping"
	// HandoffRefused: the daemon cannot serve a handed-off host (the
	// table file is not one it knows); serve forwards instead.
	HandoffRefused = "refused"
)

// Host is the Host header the client sends; the daemon rejects others.
const Host = "local-mcpx.sock"

// Error is the body of every non-2xx response.
type Error struct {
	Error string `json:"error"`
}

// Status is the reply to GET PathStatus.
type Status struct {
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Config  string    `json:"config"` // file, or "" for the embedded default
	Socket  string    `json:"socket"`
	Started time.Time `json:"started"`
	Hosts   int       `json:"hosts"` // connected host streams
	// Connected lists each connected host with the profile of its
	// tool-call timer: stream connections, legacy HTTP sessions and
	// 2026-07-28 HTTP requests in flight.
	Connected []ConnectedHost `json:"connected"`
	// HTTP is the MCP endpoint's URL on TCP, "" when the daemon listens on
	// its socket only; TokenFile holds the bearer token it requires.
	HTTP         string `json:"http,omitempty"`
	TokenFile    string `json:"tokenFile,omitempty"`
	HTTPSessions int    `json:"httpSessions"` // open legacy HTTP sessions
	// Goroutines is how many goroutines the daemon runs: a leak shows as
	// a count that grows with nothing in flight.
	Goroutines int `json:"goroutines"`
	// ToolNameCollisions, from the latest listing, say which tools share an
	// exposed name (one is hidden) and the way out.
	ToolNameCollisions []string       `json:"toolNameCollisions,omitempty"`
	Upstreams          []Upstream     `json:"upstreams"`
	Calls              []InFlightCall `json:"calls"`
	// Jobs are the jobs this daemon runs (see Job); JobStoreWrites counts
	// its writes to the job store since it started.
	Jobs []Job `json:"jobs,omitempty"`
	// SignIns are the OAuth sign-ins of the HTTP servers, by name.
	SignIns        []SignIn `json:"signIns,omitempty"`
	JobStoreWrites int64    `json:"jobStoreWrites,omitempty"`
	// Cluster, when the daemon is a replica (its config names a shared
	// store), is every replica sharing it.
	Cluster *Cluster `json:"cluster,omitempty"`
	// JobLeases, when the daemon keeps jobs, says whether it holds the
	// leases of the jobs it runs.
	JobLeases *JobLeases `json:"jobLeases,omitempty"`
	// ReloadFailure, while the latest reload of the config file failed,
	// says why; the daemon runs the config before it.
	ReloadFailure *ReloadFailure `json:"reloadFailure,omitempty"`
	// Audit is the audit log's writer, when there is one.
	Audit *AuditStats `json:"audit,omitempty"`
	// Memory is what each of mcpx's processes costs: the daemon, each
	// server's process (its shim), each warm sandbox child. Empty where
	// /proc does not tell.
	Memory []ProcessMemory `json:"memory,omitempty"`
}

// JobLeases is whether a daemon holds its jobs' leases: it renews them
// every third of the lease term; once the job store has answered none
// for a whole term, they are lost (another replica may take its jobs).
type JobLeases struct {
	Lost bool `json:"lost"`
	// Renewed is when the store last answered a renewal (zero before
	// the first).
	Renewed time.Time `json:"renewed,omitzero"`
	Error   string    `json:"error,omitempty"` // why the last renewal failed
	// SkewMs is how far the daemon's clock is ahead of the shared
	// store's (behind if negative), in milliseconds; leases keep to the
	// store's.
	SkewMs int64 `json:"skewMs,omitempty"`
	// Exclusive: the store is this daemon's alone (its SQLite file): no
	// other mcpx takes its jobs when it loses its leases; their calls
	// run on, and their ends are written once the store answers.
	Exclusive bool `json:"exclusive,omitempty"`
	// FileLost: the last renewal was refused because the store's file
	// was removed, replaced, truncated or overwritten while the daemon
	// ran (Error says which); nothing more is written to it.
	FileLost bool `json:"fileLost,omitempty"`
}

// Cluster is the replicas sharing one store (mcpx.store), as their
// heartbeats say: each writes one as it renews its job leases, every
// third of the lease term.
type Cluster struct {
	Self        string    `json:"self"` // the owner of the replica answering
	LeaseTermMs int64     `json:"leaseTermMs"`
	Read        time.Time `json:"read"`            // when the replicas were read
	Error       string    `json:"error,omitempty"` // why they could not be read then
	Replicas    []Replica `json:"replicas"`
}

// StoreProbe is what a look at the shared store (mcpx.store) found,
// without changing it: no migration runs (mcpx doctor).
type StoreProbe struct {
	Where    string `json:"where"`    // host:port/database, no credentials
	Schema   int    `json:"schema"`   // the store's schema version; 0 before any mcpx migrated it
	Build    int    `json:"build"`    // the schema version this build uses
	Replicas int    `json:"replicas"` // gateways that announced themselves in the last minute
}

// Replica is one replica of a Cluster.
type Replica struct {
	Owner   string    `json:"owner"`             // as its job leases name it
	Address string    `json:"address,omitempty"` // where it serves HTTP hosts
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Seen    time.Time `json:"seen"` // its last heartbeat
	// Live: seen within a lease term; a replica that is not has died or
	// lost the store, and its jobs go to the others once their leases
	// lapse.
	Live bool `json:"live"`
	Jobs int  `json:"jobs"` // the running jobs it owns
	// LeaseUntil is the latest lease of its jobs.
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
}

// ConnectedHost is one connected host.
type ConnectedHost struct {
	ID       string      `json:"id"`                 // host-N (a stream) or http-N
	Client   string      `json:"client"`             // the clientInfo.name it sent; "" before it sent one
	Protocol string      `json:"protocol,omitempty"` // the negotiated revision
	Profile  HostProfile `json:"profile"`
}

// HostProfile is a host's tool-call timer as mcpx assumes it.
type HostProfile struct {
	Name            string `json:"name"`
	TimeoutMs       int64  `json:"timeoutMs"` // 0: no timer
	ResetOnProgress bool   `json:"resetOnProgress"`
	Source          string `json:"source"` // builtin, config or default
}

// Upstream is one configured server's state.
type Upstream struct {
	Name string `json:"name"`
	// State is idle, starting, ready, failed, stopped (after an idle
	// stop) or unconfigured (its entry in the config has a mistake, which
	// LastError names; it does not run).
	State      string    `json:"state"`
	PID        int       `json:"pid,omitempty"`
	Protocol   string    `json:"protocol,omitempty"`
	ServerName string    `json:"serverName,omitempty"`
	Since      time.Time `json:"since,omitzero"`
	Starts     int       `json:"starts"`
	InFlight   int       `json:"inFlight"`
	Queued     int       `json:"queued,omitempty"`  // calls waiting for one of its call slots
	Pending    int       `json:"pending,omitempty"` // requests sent to it that await its answer
	LastError  string    `json:"lastError,omitempty"`
	Eager      bool      `json:"eager,omitempty"`
	// Failures counts failed starts in a row, Crashes early crashes in a
	// row (within 10 s of a start); RetryAt, when set, is when the next
	// start may begin.
	Failures int       `json:"failures,omitempty"`
	Crashes  int       `json:"crashes,omitempty"`
	RetryAt  time.Time `json:"retryAt,omitzero"`
	// PerHost marks a server that runs a session per host; HostSessions
	// counts those (beside the shared session the fields above describe,
	// which serves listings), and Pending includes their requests.
	PerHost      bool `json:"perHost,omitempty"`
	HostSessions int  `json:"hostSessions,omitempty"`
}

// InFlightCall is one call in flight.
type InFlightCall struct {
	ID         uint64    `json:"id"`
	Host       string    `json:"host"`
	Method     string    `json:"method"`
	Server     string    `json:"server,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	UpstreamID int64     `json:"upstreamId,omitempty"`
	Started    time.Time `json:"started"`
	Progress   *Progress `json:"progress,omitempty"`
}

// Progress is the latest progress of a call.
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Tools is the reply to GET PathTools?q=words.
type Tools struct {
	Tools  []Tool            `json:"tools"`
	Errors map[string]string `json:"errors,omitempty"` // servers that could not be listed
	// Meta are mcpx's own tools (mcpx_exec, mcpx_job, mcpx_job_cancel),
	// each run through its Route rather than a call, for integrations
	// that offer them as hosts do.
	Meta []Tool `json:"meta,omitempty"`
}

// Tool is one exposed tool.
type Tool struct {
	Name        string          `json:"name"` // as hosts see it
	Server      string          `json:"server"`
	Tool        string          `json:"tool"` // the upstream's own name
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Route       string          `json:"route,omitempty"` // a meta tool's route (PathV1Exec, PathV1JobWait, PathV1JobCancel)
}

// CallRequest is the body of POST PathCall.
type CallRequest struct {
	// Tool is "server.tool", "server<separator>tool" or an exposed name.
	Tool          string          `json:"tool"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	IdleTimeoutMs int64           `json:"idleTimeoutMs,omitempty"`
	MaxTimeoutMs  int64           `json:"maxTimeoutMs,omitempty"`
	// Client names the program calling ("opencode"): a call it abandons
	// by closing the stream is cancelled upstream with the reason "the
	// client disconnected (<client>)".
	Client string `json:"client,omitempty"`
	// JobAfterMs, when positive, is how long a streamed call may run
	// before it becomes a job (a client's own timer, less a margin): the
	// stream then ends with a "job" event and the call goes on, kept as
	// that job; closing the stream no longer cancels it. With
	// JobResetOnProgress the time counts from the call's last progress
	// instead of its start. Ignored by POST PathJobs.
	JobAfterMs         int64 `json:"jobAfterMs,omitempty"`
	JobResetOnProgress bool  `json:"jobResetOnProgress,omitempty"`
}

// ExecRequest is the body of POST PathExec: a script run as mcpx_exec
// runs it. Its answer is the stream of CallEvents a call's is, the
// result being the script's.
//
// With Background set the script runs as a job instead, and the answer is
// that Job (JSON, not a stream), as POST PathJobs answers a call's.
type ExecRequest struct {
	Code       string `json:"code"`
	TimeoutMs  int64  `json:"timeoutMs,omitempty"`
	Background bool   `json:"background,omitempty"`
	// Client names the program asking, as CallRequest.Client does.
	Client string `json:"client,omitempty"`
}

// CallEvent is one line of the NDJSON stream answering POST PathCall:
// "started" first, then any number of "progress", then exactly one of
// "result", "error" or (a call asked to, past CallRequest.JobAfterMs)
// "job". Closing the stream cancels the call unless it has become a job.
type CallEvent struct {
	Type     string          `json:"type"` // started, progress, result, error, job
	CallID   uint64          `json:"callId,omitempty"`
	Server   string          `json:"server,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	Progress *Progress       `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"` // the upstream's raw result
	IsError  bool            `json:"isError,omitempty"`
	Error    *CallError      `json:"error,omitempty"`
	// ExitCode, on the final event (result or error), is the exit status
	// mcpx call ends with for it (ExitOK ... ExitInterrupted).
	ExitCode *int `json:"exitCode,omitempty"`
	// Job, on a "job" event, is the job the call has become: read it,
	// wait for it and cancel it at PathV1Job and the paths beside it.
	Job *Job `json:"job,omitempty"`
}

// CallError is why a call failed.
type CallError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Kind is mcpx's name for the cause: idle_timeout, hard_timeout,
	// user_interrupt, stopping, upstream_exited, upstream_error, ...
	Kind string `json:"kind"`
}

// CancelRequest is the body of POST PathCancel.
type CancelRequest struct {
	Reason string `json:"reason"` // "user" for a person's interrupt
}

// PathReload re-reads the daemon's config file (POST).
const PathReload = "/v0/reload"

// ReloadRequest is the body of POST PathReload, which may be empty. Env
// holds values of the ${VAR}s the config names, as the client's
// environment has them: the daemon expands the file with these over its
// own environment, from this reload on (its later reloads included).
type ReloadRequest struct {
	Env map[string]string `json:"env,omitempty"`
}

// ReloadFailure is why the daemon's latest reload of its config file
// failed: the daemon runs the config it had before, until a reload
// succeeds.
type ReloadFailure struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// ReloadResult is the reply to POST PathReload: which servers were added,
// removed, changed (those are restarted; their calls in flight end with an
// error saying so) or left alone since the config of the previous POST (or
// the daemon's start), edits the daemon applied by itself included.
type ReloadResult struct {
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Changed   []string `json:"changed"`
	Unchanged []string `json:"unchanged"`
	// Ignored lists settings that changed but need a restart (mcpx stop).
	Ignored []string `json:"ignored,omitempty"`
	// Unconfigured names the servers whose entry has a mistake of its own
	// (an unset ${VAR}, a bad field), and the mistake: they do not run.
	Unconfigured map[string]string `json:"unconfigured,omitempty"`
}

// Paths of the job API: the list (GET), a background call (POST a
// CallRequest: the job), one job (?wait=seconds waits for its end), and
// its cancel.
const (
	PathJobs      = "/v0/jobs"
	PathJob       = "/v0/jobs/{id}"
	PathJobCancel = "/v0/jobs/{id}/cancel"
)

// Job is one job: a call whose answer mcpx keeps.
type Job struct {
	ID        string          `json:"id"`
	Principal string          `json:"principal"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Status    string          `json:"status"` // running, completed, failed, cancelled, interrupted
	Attempt   int             `json:"attempt"`
	Progress  *Progress       `json:"progress,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	Note      string          `json:"note,omitempty"`
	Created   time.Time       `json:"created"`
	Finished  time.Time       `json:"finished,omitzero"`
	// Late is the end of an earlier attempt that came after the job was
	// taken from the mcpx running it (its lease lost): the job's status
	// is its own, and Note says what happened.
	Late *LateEnd `json:"late,omitempty"`
}

// LateEnd is a job's late end: how the call of an earlier attempt ended
// at the mcpx that had lost its lease.
type LateEnd struct {
	Status string          `json:"status"` // completed or failed
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	At     time.Time       `json:"at"`
}

// Jobs is the reply to GET PathJobs, newest first.
type Jobs struct {
	Jobs []Job `json:"jobs"`
}

// PathRestart restarts one upstream server (POST): its sessions stop,
// their calls in flight ending with an error saying so, and it starts
// again at once.
const PathRestart = "/v0/servers/{name}/restart"

// PathUILink mints a one-time link to the live view (POST), answered
// with a UILink.
const PathUILink = "/v0/ui/link"

// UILink is the reply to POST PathUILink.
type UILink struct {
	// URL opens the live view once: it sets the view's cookie and
	// expires after its first use or a minute, whichever comes first.
	URL string `json:"url"`
}

// PathMetrics serves the Prometheus metrics page (GET), on the socket and,
// behind the token, on the HTTP listener.
const PathMetrics = "/metrics"

// SignIn is one HTTP server's OAuth sign-in (never its tokens).
type SignIn struct {
	Server string `json:"server"`
	// State: signed_in, not_signed_in, old_url (signed in to a URL the
	// config no longer names: mcpx login again), revoked (the
	// authorization server refused the refresh token: mcpx login again),
	// unreadable.
	State    string    `json:"state"`
	SignedIn time.Time `json:"signedIn,omitzero"`
	// Expiry is the access token's; absent when the server gave none.
	Expiry time.Time `json:"expiry,omitzero"`
	// Refreshable: a refresh token is kept, so an expired access token is
	// renewed on the next request without a new sign-in.
	Refreshable bool `json:"refreshable,omitempty"`
	// Refused is when the refresh token was refused (revoked).
	Refused time.Time `json:"refused,omitzero"`
	Error   string    `json:"error,omitempty"`
	// RefreshFailing is set while the background refresh of the access
	// token keeps failing (the authorization server down or refusing for
	// a while): requests still work until the token expires.
	RefreshFailing *RefreshFailing `json:"refreshFailing,omitempty"`
}

// RefreshFailing is a background refresh that keeps failing.
type RefreshFailing struct {
	Failures int       `json:"failures"` // in a row
	Error    string    `json:"error"`    // the last one's
	Next     time.Time `json:"next"`     // when it is tried again
}
