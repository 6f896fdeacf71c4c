package principal

import (
	"fmt"
	"strings"

	"mcpx/internal/config"
)

// Op is an operation a principal asks for.
type Op int

// The operations. Every face maps each of its requests to one of them
// (the local API's route table names each route's; hostserver's tool
// filter decides CallTool).
const (
	opNone Op = iota
	// CallTool calls Target.Server's Target.Tool (exposed as
	// Target.Name): directly, through mcpx_call, from a script, through
	// /v1/call, /v1/exec or the CLI. Listing a tool is deciding it.
	CallTool
	// ReadJob reads, waits on or lists job Target.ID of Target.Owner,
	// which runs Target.Server's Target.Tool.
	ReadJob
	// CancelJob cancels such a job.
	CancelJob
	// ReadCall sees call Target.ID of Target.Owner in flight (status).
	ReadCall
	// CancelCall cancels it.
	CancelCall
	// ReadStatus reads the whole of the daemon's status: every
	// principal's calls, jobs and hosts, its files and replicas. A
	// principal refused it reads its own part (ReadCall, ReadJob).
	ReadStatus
	// ReadMetrics reads the Prometheus page: every call's server and
	// tool, counted, no principal named.
	ReadMetrics
	// Operate runs the daemon: shutdown, reload, restarts, the live
	// view and its link, carrying a host's stdio stream.
	Operate
	// StartJob starts a job (or task) of Target.Server's Target.Tool
	// (Target.Name as asked for; "" Server: a script): one asked for
	// (POST /v1/jobs, a background call or script, a task), or a call
	// that would become one past its host's timer. Refused, the call
	// asked for is refused; the call past a timer stays a plain call.
	StartJob
	// ReadAudit reads the audit log: every principal's records.
	ReadAudit
	// SignIn completes Target.Owner's own sign-in to Target.Server (a
	// per-person server): the browser's steps, whose principal is the one
	// the sign-in's state was bound to (Bound).
	SignIn
	// RevokeSignIn revokes and forgets Target.Owner's own sign-in to
	// Target.Server.
	RevokeSignIn
	opEnd
)

var opNames = [...]string{opNone: "none", CallTool: "call a tool", ReadJob: "read a job", CancelJob: "cancel a job",
	ReadCall: "see a call", CancelCall: "cancel a call", ReadStatus: "read the whole status", ReadMetrics: "read the metrics", Operate: "operate the daemon",
	StartJob: "start a job", ReadAudit: "read the audit log",
	SignIn: "sign in to an upstream", RevokeSignIn: "revoke a sign-in to an upstream"}

func (o Op) String() string {
	if o <= opNone || o >= opEnd {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// Ops lists every operation, for tests that walk them.
func Ops() []Op {
	out := make([]Op, 0, int(opEnd)-1)
	for o := opNone + 1; o < opEnd; o++ {
		out = append(out, o)
	}
	return out
}

// Target is what an operation acts on; each Op reads the fields it names.
type Target struct {
	// ID is the job's id or the call's (decimal), for messages.
	ID string
	// Owner is the ID of the principal the job or call belongs to.
	Owner string
	// Server and Tool name the tool ("" Server: one of mcpx's own, such
	// as a script's mcpx_exec, always allowed); Name is the tool as the
	// principal named it, for messages.
	Server, Tool, Name string
	// Filter is, for a job of no server (a script's, whose tools are not
	// kept), the tool filter the script ran under, by its place in the
	// config (config.ToolFilter.Path); "" for none.
	Filter string
}

// Refusal is why an operation is refused.
type Refusal struct {
	Op Op
	// Hidden: the target is another principal's, and the refusal says
	// no more than that it does not exist (a 404, not a 403), so that
	// ids do not tell who else is there.
	Hidden bool
	Why    string
}

func (e *Refusal) Error() string { return e.Why }

// Policy is what one principal may do under the current config: its
// host tool filter (mcpx.hosts.NAME.tools, NAME its token's name, else
// its clientInfo.name), and the rules of Decide.
type Policy struct {
	who   Principal
	tools *config.ToolFilter
	sep   string
	// admin: a person whose group makes them one (mcpx.auth.groups.G.admin)
	// may do what the operator may.
	admin bool
	// noJobs: a person none of whose groups allows background
	// (mcpx.auth.groups.G.background) may start no job.
	noJobs bool
	audit  Auditor // nil: none (audit.go)
}

// NewPolicy returns who's policy with the tool filter tools (nil: every
// tool), whose patterns name tools as server+sep+tool.
func NewPolicy(who Principal, tools *config.ToolFilter, sep string) Policy {
	return Policy{who: who, tools: tools, sep: sep}
}

// NewPersonPolicy returns the policy of the person who: the union of
// the tool filters of their groups (nil: every tool), as
// config.Config.GroupTools makes it, and, if admin (one of their groups
// is an admin group), what the operator may do.
func NewPersonPolicy(who Principal, tools *config.ToolFilter, admin bool, sep string) Policy {
	return Policy{who: who, tools: tools, sep: sep, admin: admin && who.IsPerson()}
}

// WithoutJobs returns p refusing StartJob to a person who is no admin:
// none of their groups allows background (config.Config.GroupBackground).
func (p Policy) WithoutJobs() Policy {
	p.noJobs = p.who.IsPerson()
	return p
}

// Who is the principal the policy is of.
func (p Policy) Who() Principal { return p.who }

// Tools returns the tool filter (nil: none) and the separator its
// patterns are written with.
func (p Policy) Tools() (*config.ToolFilter, string) { return p.tools, p.sep }

// JobOwner is whose jobs a store query of this principal reads: its own,
// or "" (every principal's) for the operator. Each job read is still
// decided by ReadJob.
func (p Policy) JobOwner() string {
	if p.operates() {
		return ""
	}
	return p.who.id
}

// decide is the rules of Decide (audit.go): a job or task is the reader's
// only if it is its principal's (the operator reads every principal's)
// and its tool is still allowed to the reader (a script's job, whose
// tools are not known, only if the reader has no tool filter or the one
// the script ran under); a call is its
// principal's; the whole status and running the daemon are the
// operator's; the metrics the operator's and the default token's.
func (p Policy) decide(op Op, t Target) error {
	if p.who.IsZero() {
		return &Refusal{Op: op, Why: "forbidden: no principal was decided for this request"}
	}
	switch op {
	case CallTool:
		if why := p.toolRefusal(t.Server, t.Tool); why != "" {
			name := t.Name
			if name == "" {
				name = t.Server + p.sep + t.Tool
			}
			return &Refusal{Op: op, Why: fmt.Sprintf("tool %q is not allowed for this host: %s", name, why)}
		}
		return nil
	case ReadJob, CancelJob:
		if !p.mine(t.Owner) {
			return &Refusal{Op: op, Hidden: true, Why: fmt.Sprintf("job %q: no job has this id", t.ID)}
		}
		if t.Server == "" && p.tools != nil && t.Filter != p.tools.Path {
			return &Refusal{Op: op, Why: fmt.Sprintf("job %q runs a script that did not run under this host's tool filter (%s): the tools it may call are not known", t.ID, p.tools.Path)}
		}
		if why := p.toolRefusal(t.Server, t.Tool); why != "" {
			return &Refusal{Op: op, Why: fmt.Sprintf("job %q runs tool %q, which is not allowed for this host: %s", t.ID, t.Server+p.sep+t.Tool, why)}
		}
		return nil
	case ReadCall, CancelCall:
		if !p.mine(t.Owner) {
			return &Refusal{Op: op, Hidden: true, Why: "no such call in flight"}
		}
		return nil
	case SignIn:
		// Only one's own, never the operator's on another's behalf: a
		// person's upstream account is theirs to connect.
		if t.Owner == "" || t.Owner != p.who.id {
			return &Refusal{Op: op, Why: "forbidden: a sign-in is completed only by the principal it was started for"}
		}
		return nil
	case RevokeSignIn:
		if t.Owner == "" || !p.mine(t.Owner) {
			return &Refusal{Op: op, Hidden: true, Why: fmt.Sprintf("no sign-in of this principal to %q", t.Server)}
		}
		return nil
	case ReadStatus, Operate, ReadAudit:
		if !p.operates() {
			return &Refusal{Op: op, Why: "forbidden: only the local user, on the daemon's socket, or an admin, may " + op.String()}
		}
		return nil
	case StartJob:
		if err := p.decide(CallTool, t); err != nil {
			return &Refusal{Op: op, Why: err.Error()}
		}
		if p.noJobs && !p.operates() {
			return &Refusal{Op: op, Why: "forbidden: no group of this person's in mcpx.auth.groups allows background: it may not start a job or task"}
		}
		return nil
	case ReadMetrics:
		if !p.operates() && p.who.id != HTTPID {
			return &Refusal{Op: op, Why: "forbidden: the metrics are served to the local user and to the default token's holder (mcpx token), not to a named token"}
		}
		return nil
	}
	return &Refusal{Op: op, Why: "forbidden: unknown operation " + op.String()}
}

// mine reports whether what owner owns is the principal's: its own, or,
// for the operator, anyone's.
func (p Policy) mine(owner string) bool { return p.operates() || owner == p.who.id }

// operates reports whether the principal may do what the operator may:
// it is the operator, or an admin.
func (p Policy) operates() bool { return p.who.operator || p.admin }

// toolRefusal is why the filter refuses server's tool, "" if it allows
// it (mcpx's own tools, server "", are always allowed).
func (p Policy) toolRefusal(server, tool string) string {
	if server == "" || p.tools == nil {
		return ""
	}
	ok, why := p.tools.Allows(server + p.sep + tool)
	if ok {
		return ""
	}
	if strings.HasPrefix(why, "rule ") {
		why += " refuses it"
	}
	return why
}
