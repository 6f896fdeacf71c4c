package apitype

// The stable local API, /v1: for integrations (editor plugins, scripts),
// on the daemon's socket and, behind the bearer token, on its HTTP
// listener. Its contract is docs/api.md and docs/api/v1.json; a field may
// be added, none is removed or changes meaning within /v1. It shares the
// wire types above with /v0, which stays the CLI's own.
const (
	// PathV1Call runs a tool call (POST CallRequest) and streams its
	// CallEvents as NDJSON; closing the response cancels the call.
	PathV1Call = "/v1/call"
	// PathV1Exec runs a script as mcpx_exec does (POST ExecRequest),
	// streaming CallEvents as PathV1Call does.
	PathV1Exec = "/v1/exec"
	// PathV1Tools lists the exposed tools (GET ?q=words), a Tools.
	PathV1Tools = "/v1/tools"
	// PathV1Status is the daemon's Status (GET).
	PathV1Status = "/v1/status"
	// PathV1Cancel cancels a call in flight (POST CancelCall, 204).
	PathV1Cancel = "/v1/cancel"

	// PathV1Jobs lists the jobs (GET, a Jobs) and starts a call as a job
	// (POST CallRequest, the Job).
	PathV1Jobs = "/v1/jobs"
	// PathV1Job is one job (GET, a Job).
	PathV1Job = "/v1/jobs/{id}"
	// PathV1JobWait streams a job's progress and then the job once it
	// has ended, as NDJSON JobEvents (GET); closing it leaves the job
	// running.
	PathV1JobWait = "/v1/jobs/{id}/wait"
	// PathV1JobCancel cancels a job (POST CancelJob, the Job).
	PathV1JobCancel = "/v1/jobs/{id}/cancel"
	// PathV1SignIn is the caller's own sign-in to a per-person server:
	// DELETE revokes and forgets it (the operator names another
	// principal's with ?principal=ID), answered with a SignOut.
	PathV1SignIn = "/v1/signins/{server}"
	// PathV1UILink mints a one-time link to the live view for the caller
	// (POST, a UILink): for those who may operate the gateway (the local
	// user, a person of an admin group).
	PathV1UILink = "/v1/ui/link"
)

// JobEvent is one line of the NDJSON stream answering GET PathV1JobWait:
// any number of "progress", then one "end" with the job as it ended.
type JobEvent struct {
	Type     string    `json:"type"` // progress, end
	Progress *Progress `json:"progress,omitempty"`
	Job      *Job      `json:"job,omitempty"`
}

// CancelJob is the body of POST PathV1JobCancel.
type CancelJob struct {
	// Client names who cancels: the upstream is told "job cancelled
	// with <client>" ("the local API" when empty).
	Client string `json:"client,omitempty"`
}

// CancelCall is the body of POST PathV1Cancel.
type CancelCall struct {
	CallID uint64 `json:"callId"` // the started event's callId
	// Reason is sent upstream: "user" (or none) for a person's
	// interrupt, "interrupted by user"; any other text is the reason as
	// given, "cancelled by the host: <reason>".
	Reason string `json:"reason,omitempty"`
}

// Exit codes of mcpx call, which a final CallEvent's ExitCode carries so
// that a client of the API can end as the CLI would.
const (
	ExitOK          = 0
	ExitToolError   = 1 // the tool's result is an error, or the upstream answered with one
	ExitUsage       = 2 // a bad request: an unknown tool, arguments that are not an object
	ExitTransport   = 3 // the daemon, the upstream's transport or a timeout failed the call
	ExitInterrupted = 130
)

// ExitCodeOf is the exit code of mcpx call for a call that failed with
// kind (CallError.Kind).
func ExitCodeOf(kind string) int {
	switch kind {
	case "user_interrupt":
		return ExitInterrupted
	case "upstream_error":
		return ExitToolError
	}
	return ExitTransport
}

// SignOut is the answer of DELETE PathV1SignIn.
type SignOut struct {
	Server    string `json:"server"`
	Principal string `json:"principal"`
	// Revoked: the authorization server revoked the tokens (RFC 7009);
	// false when it offers no revocation or the revocation failed
	// (RevokeError says why). The tokens are forgotten either way.
	Revoked     bool   `json:"revoked"`
	RevokeError string `json:"revokeError,omitempty"`
}
